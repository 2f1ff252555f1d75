"""The everyday answer-checked task set: questions about one home folder, written by hand.

Every task starts from the same home (``everyday_home``: Downloads, Documents, projects,
logs) and is judged on what the agent reports: its check reads ``$ANSWER`` (and, for "show
me" tasks, ``$LAST_OUTPUT``). Each check accepts a right answer in any reasonable wording
that names the right things, and refuses the wrong answers listed with the task (a decoy
file, a neighbouring number, everything at once). The gold commands are one correct way to
find the answer; the gold agent answers with their last output.

``shellagent tasks everyday`` prints the set; the file shipped as
``data/everyday-answers.jsonl`` is that output.
"""

from __future__ import annotations

from pathlib import Path

from shellagent.eval.tasks import Gold, Task
from shellagent.taskgen import everyday_home as home
from shellagent.taskgen.sh import (
    all_of,
    any_token,
    has,
    lacks,
    no_token,
    number,
    reported,
    size_near,
    token,
)

EVERYDAY_NAME = "everyday-answers.jsonl"
EVERYDAY_SERVER_PORT = 5173


def everyday_path() -> Path:
    return Path(__file__).resolve().parent / "data" / EVERYDAY_NAME


_DEV_SERVER = (
    "ln -sf /usr/bin/python3 /usr/local/bin/devserver && (cd /tmp; nohup devserver -m "
    f"http.server {EVERYDAY_SERVER_PORT} --bind 127.0.0.1 >/dev/null 2>&1 &) && "
    f"for i in $(seq 100); do ss -Hltn | grep -q ':{EVERYDAY_SERVER_PORT} ' && break; "
    f"sleep 0.05; done; ss -Hltn | grep -q ':{EVERYDAY_SERVER_PORT} '"
)


def _task(
    slug: str,
    text: str,
    check: str,
    gold: tuple[str, ...],
    wrong: tuple[str, ...] = (),
    *,
    extra_setup: tuple[str, ...] = (),
) -> tuple[str, str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    return (slug, text, check, gold, wrong, extra_setup)


def _sizes() -> dict[str, int]:
    zip_size = sum(size for _, size in home.ZIP_MEMBERS)
    return {d.name: (zip_size if d.kind == "zip" else d.size) for d in home.DOWNLOADS}


def _specs() -> list[tuple[str, str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]]:
    sizes = _sizes()
    by_size = sorted(sizes, key=lambda n: -sizes[n])
    old = [d.name for d in home.DOWNLOADS if d.days > 90]
    errors = [line for line in home.APP_LOG if " ERROR " in line]
    hits = home.hits()
    ips = sorted({ip for ip, _, _ in hits})
    ip_counts = {ip: sum(1 for i, _, _ in hits if i == ip) for ip in ips}
    top_ip = max(ips, key=lambda ip: ip_counts[ip])
    paths_500 = {p: sum(1 for _, q, s in hits if q == p and s == 500) for _, p, _ in hits}
    top_500 = max(paths_500, key=lambda p: paths_500[p])
    spend: dict[str, int] = {}
    for _, category, amount in home.EXPENSES:
        spend[category] = spend.get(category, 0) + amount
    top_spend = max(spend, key=lambda c: spend[c])
    unread = [b["title"] for b in home.BOOKS if not b["read"]]
    read = [b["title"] for b in home.BOOKS if b["read"]]
    warn_days: dict[str, int] = {}
    for line in home.APP_LOG:
        if " WARN " in line:
            warn_days[line[:10]] = warn_days.get(line[:10], 0) + 1
    worst_day = max(warn_days, key=lambda day: warn_days[day])
    days = sorted({line[:10] for line in home.APP_LOG})
    deb = next(d for d in home.DOWNLOADS if d.name.endswith(".deb"))
    deb_sha = home.sha256_of_fill(deb.size, deb.name.split(".")[0])
    exe = next(d for d in home.DOWNLOADS if d.name.endswith(".exe"))
    exe_sha = home.sha256_of_fill(exe.size, exe.name.split(".")[0])
    jpg_total = sum(s for n, s in sizes.items() if n.endswith(".jpg") and n != "diagram.jpg") + 33
    dl = "~/Downloads"
    return [
        _task(
            "largest-downloads",
            "Which five files in my Downloads folder are the largest?",
            all_of(has(*by_size[:5]), lacks(*by_size[5:])),
            (f"ls -S {dl} | head -5",),
            (", ".join(by_size[1:6]), ", ".join(by_size)),
        ),
        _task(
            "downloads-size",
            "My Downloads folder feels bloated. What's its total size on disk?",
            size_near(sum(sizes.values())),
            (f"du -sh {dl}",),
            ("2.1G", f"{sum(sizes.values()) // 2} bytes"),
        ),
        _task(
            "newest-download",
            "What's the most recent thing I downloaded?",
            all_of(has("meeting-agenda.docx"), lacks("empty-note.txt", "ubuntu-notes.txt")),
            (f"ls -t {dl} | head -1",),
            ("empty-note.txt", "ubuntu-notes.txt"),
        ),
        _task(
            "stale-downloads",
            "Which files in ~/Downloads haven't been touched for more than 90 days?",
            all_of(has(*old), lacks("budget-2024.xlsx", "tax-return-2023.pdf", "IMG_2041.jpg")),
            (f"find {dl} -type f -mtime +90",),
            (", ".join(old[:-1]), "budget-2024.xlsx, " + ", ".join(old)),
        ),
        _task(
            "pdf-count",
            "How many PDFs are stored anywhere under ~/Documents?",
            number(home.PDF_COUNT),
            ("find ~/Documents -type f -name '*.pdf' | wc -l",),
            (str(home.PDF_COUNT - 1), str(home.PDF_COUNT + 1)),
        ),
        _task(
            "duplicate-downloads",
            "Are any of my downloads exact duplicates of each other? Which files?",
            all_of(has("IMG_2042.jpg", "IMG_2042 (1).jpg"), lacks("IMG_2041.jpg", "diagram.jpg")),
            (f"cd {dl} && md5sum * | sort | uniq -w32 -D",),
            ("IMG_2041.jpg and IMG_2042.jpg", "No duplicates."),
        ),
        _task(
            "empty-download",
            "One file in Downloads is completely empty. What is it called?",
            all_of(has("empty-note.txt"), lacks("ubuntu-notes.txt", "meeting-agenda.docx")),
            (f"find {dl} -type f -empty",),
            ("ubuntu-notes.txt", "diagram.jpg"),
        ),
        _task(
            "error-count",
            "My app has been flaky. Count the ERROR entries in ~/logs/app.log: how many are there?",
            number(len(errors)),
            ("grep -c ERROR ~/logs/app.log",),
            (str(len(errors) + 1), str(len(home.APP_LOG))),
        ),
        _task(
            "last-error",
            "Something broke in the webshop recently. Which error did ~/logs/app.log record last?",
            reported(["template not found"], ["payment gateway", "coupon", "connection refused"]),
            ("grep ERROR ~/logs/app.log | tail -1",),
            (errors[0], "\n".join(errors)),
        ),
        _task(
            "top-ip",
            "Which client address hits my site the most, judging by ~/logs/access.log?",
            all_of(token(top_ip), no_token(*(ip for ip in ips if ip != top_ip))),
            ("awk '{print $1}' ~/logs/access.log | sort | uniq -c | sort -rn | head -1",),
            ("192.168.1.20", " ".join(ips)),
        ),
        _task(
            "count-404",
            "How many requests in my access log ended in a 404?",
            number(sum(1 for _, _, s in hits if s == 404)),
            ("awk '$9 == 404' ~/logs/access.log | wc -l",),
            (str(sum(1 for _, _, s in hits if s == 500)), str(len(hits))),
        ),
        _task(
            "path-500",
            "Which URL in access.log (in ~/logs) failed with a 500 most often?",
            all_of(token(top_500), no_token("/api/items", "/checkout", "/cart")),
            ("awk '$9 == 500 {print $7}' ~/logs/access.log | sort | uniq -c | sort -rn | head -1",),
            ("/api/items", "/checkout"),
        ),
        _task(
            "backup-failed",
            "According to ~/logs/backup.log, on which day did the backup fail?",
            all_of(token("2024-05-05"), no_token("2024-05-04", "2024-05-06")),
            ("grep FAILED ~/logs/backup.log",),
            ("2024-05-04", "2024-05-06"),
        ),
        _task(
            "webshop-version",
            "What version is the webshop project at, according to its package.json?",
            all_of(token("2.4.1"), no_token("2.4.0")),
            ("jq -r .version ~/projects/webshop/package.json",),
            ("2.4.0", "1.0.0"),
        ),
        _task(
            "last-commit-author",
            "Whose commit is at the tip of ~/projects/webshop?",
            all_of(has("Lena Novak"), lacks("Ines Duarte", "Kofi Mensah")),
            ("git -C ~/projects/webshop log -1 --format=%an",),
            ("Ines Duarte", "Kofi Mensah"),
        ),
        _task(
            "commit-count",
            "How many commits does the webshop repository have?",
            number(len(home.WEBSHOP_COMMITS)),
            ("git -C ~/projects/webshop rev-list --count HEAD",),
            (str(len(home.WEBSHOP_COMMITS) - 1), str(len(home.WEBSHOP_COMMITS) + 1)),
        ),
        _task(
            "last-commit-files",
            "My latest commit to the webshop touched a few files. Which ones?",
            all_of(has("cart.js", "README.md"), lacks("app.js", "checkout.js", "package.json")),
            ("git -C ~/projects/webshop show --name-only --format= HEAD",),
            ("package.json", "src/app.js, src/cart.js, src/checkout.js, README.md"),
        ),
        _task(
            "current-branch",
            "I forgot which branch I left ~/projects/webshop checked out on. Which one is it?",
            all_of(token("main"), no_token("feature/payments")),
            ("git -C ~/projects/webshop branch --show-current",),
            ("feature/payments", "master"),
        ),
        _task(
            "todo-count",
            "How many TODO comments are left in the webshop's src folder?",
            number(home.WEBSHOP_TODOS),
            ("grep -r TODO ~/projects/webshop/src | wc -l",),
            (str(home.WEBSHOP_TODOS - 1), str(home.WEBSHOP_TODOS + 1)),
        ),
        _task(
            "requests-version",
            "Which version of requests does ~/projects/dataproc require?",
            all_of(token("2.31.0"), no_token("2.1.4", "1.26")),
            ("grep requests ~/projects/dataproc/requirements.txt",),
            ("2.1.4", "1.26"),
        ),
        _task(
            "python-lines",
            "How many lines of Python are there in ~/projects/dataproc altogether?",
            number(home.DATAPROC_PY_LINES),
            ("find ~/projects/dataproc -name '*.py' -exec cat {} + | wc -l",),
            (str(home.DATAPROC_PY_LINES - 2), "40"),
        ),
        _task(
            "longest-python-file",
            "Which Python file in the dataproc project is the longest?",
            all_of(has("main.py"), lacks("load.py", "clean.py", "report.py", "test_clean.py")),
            ("find ~/projects/dataproc -name '*.py' -exec wc -l {} + | sort -rn | sed -n 2p",),
            ("scripts/load.py", "tests/test_clean.py"),
        ),
        _task(
            "berlin-contacts",
            "How many of my contacts (Documents/contacts.csv) live in Berlin?",
            number(sum(1 for c in home.CONTACTS if c[2] == "Berlin")),
            ("grep -c ',Berlin$' ~/Documents/contacts.csv",),
            ("2", str(len(home.CONTACTS))),
        ),
        _task(
            "contact-email",
            "What's Kofi Mensah's email address? It's in my contacts file in Documents.",
            all_of(has("kofi.mensah@example.org"), lacks("jonas.weber@", "omar.sayed@")),
            ("grep 'Kofi Mensah' ~/Documents/contacts.csv | cut -d, -f2",),
            ("jonas.weber@example.org", "kofi@example.org"),
        ),
        _task(
            "expenses-total",
            "How much did I spend in total, according to ~/Documents/expenses.csv?",
            number(sum(a for _, _, a in home.EXPENSES)),
            ("awk -F, 'NR > 1 {s += $3} END {print s}' ~/Documents/expenses.csv",),
            (str(sum(a for _, _, a in home.EXPENSES) - 25), "850"),
        ),
        _task(
            "top-expense-category",
            "Which category did I spend the most money on, going by my expenses file?",
            all_of(has(top_spend), lacks("groceries", "transport", "utilities")),
            (
                "awk -F, 'NR > 1 {s[$2] += $3} END {for (c in s) print s[c], c}' "
                "~/Documents/expenses.csv | sort -rn | head -1",
            ),
            ("groceries", "utilities"),
        ),
        _task(
            "unread-books",
            "Which books in ~/Documents/books.json haven't I read yet?",
            all_of(has(*unread), lacks(*read)),
            ("jq -r '.[] | select(.read | not) | .title' ~/Documents/books.json",),
            (", ".join(read), ", ".join(unread + read)),
        ),
        _task(
            "books-before-2000",
            "How many of the books in my books.json were published before 2000?",
            number(sum(1 for b in home.BOOKS if b["year"] < 2000)),
            ("jq '[.[] | select(.year < 2000)] | length' ~/Documents/books.json",),
            ("2", "6"),
        ),
        _task(
            "biggest-documents-folder",
            "Among the subfolders of ~/Documents, which one is the heaviest?",
            all_of(has("photos"), lacks("taxes", "manuals", "letters")),
            ("du -s ~/Documents/*/ | sort -rn | head -1",),
            ("taxes", "manuals"),
        ),
        _task(
            "non-executable-scripts",
            "Which scripts in ~/projects/dataproc/scripts can't be executed directly?",
            all_of(has("load.py", "report.py"), lacks("clean.py")),
            ("find ~/projects/dataproc/scripts -type f ! -perm -u+x",),
            ("clean.py", "clean.py, load.py, report.py"),
        ),
        _task(
            "taxes-permissions",
            "My taxes folder in Documents should be private. What mode does it have now (octal)?",
            all_of(any_token(("700", "0700")), no_token("755", "644")),
            ("stat -c %a ~/Documents/taxes",),
            ("755", "644"),
        ),
        _task(
            "webshop-port",
            "Which port is the webshop configured to listen on (see its config.json)?",
            all_of(token("8081"), no_token("80", "8080")),
            ("jq .port ~/projects/webshop/config.json",),
            ("8080", "80"),
        ),
        _task(
            "dentist-notes",
            "Which of my notes in ~/Documents/notes mention the dentist?",
            all_of(has("dentist.md", "todo.md"), lacks("groceries.md", "ideas.md")),
            ("grep -il dentist ~/Documents/notes/*",),
            ("dentist.md", "groceries.md, ideas.md"),
        ),
        _task(
            "cv-words",
            "How many words are in my CV (Documents/cv.md)?",
            number(home.CV_WORDS),
            ("wc -w < ~/Documents/cv.md",),
            (str(home.CV_WORDS + 3), str(len(home.CV))),
        ),
        _task(
            "warning-day",
            "Were the warnings in ~/logs/app.log spread evenly over the days? Which date had most?",
            all_of(token(worst_day), no_token(*(d for d in days if d != worst_day))),
            ("grep WARN ~/logs/app.log | cut -c1-10 | sort | uniq -c | sort -rn | head -1",),
            tuple(d for d in days if d != worst_day),
        ),
        _task(
            "fake-jpeg",
            "One of the .jpg files in Downloads isn't really a JPEG image. Which one?",
            all_of(has("diagram.jpg"), lacks("IMG_2041.jpg", "IMG_2042.jpg")),
            (f"file {dl}/*.jpg | grep -v JPEG",),
            ("IMG_2041.jpg", "IMG_2042 (1).jpg"),
        ),
        _task(
            "zip-contents",
            "What's inside holiday-photos.zip in my Downloads? I don't want to unpack it.",
            has(*(m for m, _ in home.ZIP_MEMBERS)),
            (f"unzip -Z1 {dl}/holiday-photos.zip",),
            ("beach-day.jpg", "IMG_2041.jpg, IMG_2042.jpg"),
        ),
        _task(
            "tarball-config",
            "Is there a config.php inside ~/Downloads/site-backup.tar.gz? Give me its path in "
            "the archive.",
            has("site/config.php"),
            (f"tar -tzf {dl}/site-backup.tar.gz | grep config.php",),
            ("No, there is no config.php.", "config/config.php"),
        ),
        _task(
            "installer-checksum",
            "What's the SHA-256 checksum of the .deb installer in my Downloads?",
            all_of(has(deb_sha), lacks(exe_sha)),
            (f"sha256sum {dl}/*.deb",),
            (exe_sha, deb_sha[:32]),
        ),
        _task(
            "nginx-change",
            "What setting differs between nginx.conf and nginx.conf.bak in the webshop project?",
            all_of(has("client_max_body_size"), lacks("worker_processes")),
            (
                "diff ~/projects/webshop/nginx.conf.bak ~/projects/webshop/nginx.conf | "
                "grep '^>' || true",
            ),
            ("worker_processes", "Nothing differs."),
        ),
        _task(
            "world-writable",
            "Are any files under ~/projects writable by everyone? Which?",
            all_of(has("notes.tmp", "requirements.txt"), lacks("package.json", "config.json")),
            ("find ~/projects -type f -perm -o+w",),
            ("No.", "package.json, config.json"),
        ),
        _task(
            "broken-links",
            "Which symbolic links in ~/projects are broken?",
            all_of(has("latest-report"), lacks("shop")),
            ("find ~/projects -maxdepth 1 -xtype l",),
            ("shop", "shop, latest-report"),
        ),
        _task(
            "jpeg-space",
            "My .jpg photos in Downloads: what do they weigh in total?",
            size_near(jpg_total),
            (f"du -ch {dl}/*.jpg | tail -1",),
            (f"{jpg_total * 3} bytes", f"{sizes['IMG_2041.jpg']} bytes"),
        ),
        _task(
            "unique-visitors",
            "How many different IP addresses show up in ~/logs/access.log?",
            number(len(ips)),
            ("awk '{print $1}' ~/logs/access.log | sort -u | wc -l",),
            (str(len(hits)), str(len(ips) + 1)),
        ),
        _task(
            "last-start",
            "When did the webshop last start, according to app.log? Date and time please.",
            all_of(token("2024-05-08"), has("07:59:58"), lacks("2024-05-07", "08:00:02")),
            ("grep Starting ~/logs/app.log | tail -1",),
            ("2024-05-07 08:00:02", "2024-05-06 08:00:01"),
        ),
        _task(
            "first-log-day",
            "What's the earliest date in ~/logs/app.log?",
            all_of(token(days[0]), no_token(*days[1:])),
            ("head -1 ~/logs/app.log | cut -d' ' -f1",),
            (days[-1], days[1]),
        ),
        _task(
            "midnight-job",
            "Which script in ~/projects/dotfiles/crontab.txt runs at midnight?",
            all_of(has("rotate-photos.sh"), lacks("backup.sh", "check-mail.sh", "weekly-report")),
            ("awk '$1 == 0 && $2 == 0' ~/projects/dotfiles/crontab.txt",),
            ("backup.sh", "weekly-report.sh"),
        ),
        _task(
            "latest-tag",
            "What's the newest release tag in the webshop repository?",
            all_of(token("v2.4.1"), no_token("v2.4.0")),
            ("git -C ~/projects/webshop tag --sort=-v:refname | head -1",),
            ("v2.4.0", "v1.0"),
        ),
        _task(
            "other-branch",
            "Apart from main, which branch exists in ~/projects/webshop?",
            all_of(token("feature/payments"), no_token("develop")),
            ("git -C ~/projects/webshop branch --format='%(refname:short)' | grep -v '^main$'",),
            ("develop", "main"),
        ),
        _task(
            "untracked-file",
            "Is there a file in the webshop folder that git doesn't track? Which?",
            all_of(has("notes.tmp"), lacks("package.json", "README.md")),
            ("git -C ~/projects/webshop status --porcelain | grep '^??'",),
            ("README.md", "Everything is tracked."),
        ),
        _task(
            "readme-title",
            "What's the title at the top of the webshop's README?",
            all_of(has("Webshop"), lacks("Cart totals")),
            ("head -1 ~/projects/webshop/README.md",),
            ("Cart totals are in cents", "README"),
        ),
        _task(
            "dev-server-port",
            "I left a dev server running earlier (it's called devserver). Which port is it on?",
            all_of(token(str(EVERYDAY_SERVER_PORT)), no_token("8080", "8081")),
            ("pgrep -a devserver",),
            ("8081", "8080"),
            extra_setup=(_DEV_SERVER,),
        ),
        _task(
            "port-owner",
            f"Port {EVERYDAY_SERVER_PORT} is taken on this machine. What's running there?",
            all_of(has("devserver"), lacks("nginx", "node")),
            (f"ps -eo comm,args | grep -E '[ ]{EVERYDAY_SERVER_PORT}( |$)'",),
            ("nginx", "node"),
            extra_setup=(_DEV_SERVER,),
        ),
        _task(
            "maria-lines",
            "In ~/logs/app.log, on how many lines does the user maria appear?",
            number(sum(1 for line in home.APP_LOG if "user=maria" in line)),
            ("grep -c 'user=maria' ~/logs/app.log",),
            ("3", str(sum(1 for line in home.APP_LOG if "user=" in line))),
        ),
        _task(
            "recent-document",
            "Which file in my Documents did I change most recently?",
            all_of(has("todo.md"), lacks("cv.md", "groceries.md", "dentist.md")),
            ("find ~/Documents -type f -printf '%T@ %p\\n' | sort -n | tail -1 | cut -d' ' -f2",),
            ("cv.md", "notes/dentist.md"),
        ),
        _task(
            "biggest-in-home",
            "What's the single biggest file anywhere in my home folder?",
            all_of(has("old-installer.exe"), lacks("setup-tool", "podcast", "flat-viewing")),
            ("find ~ -type f -printf '%s %p\\n' | sort -n | tail -1",),
            ("setup-tool_v2.3.1.deb", "flat-viewing.jpg"),
        ),
        _task(
            "contact-count",
            "How many contacts are in ~/Documents/contacts.csv, not counting the header?",
            number(len(home.CONTACTS)),
            ("tail -n +2 ~/Documents/contacts.csv | wc -l",),
            (str(len(home.CONTACTS) + 1), "3"),
        ),
        _task(
            "show-warnings",
            "Show me the warnings from 7 May in ~/logs/app.log.",
            reported(
                ["slow query on products", "retrying database connection", "disk usage at 91%"],
                ["cache miss storm", "slow query on orders"],
            ),
            ("grep '^2024-05-07' ~/logs/app.log | grep WARN",),
            ("cache miss storm", "\n".join(line for line in home.APP_LOG if "WARN" in line)),
        ),
    ]


def everyday_tasks() -> list[Task]:
    """The everyday set, in order, ids ``ev-NN-slug``."""
    setup = home.home_setup()
    tasks = []
    for n, (slug, text, check, gold, wrong, extra) in enumerate(_specs(), start=1):
        tasks.append(
            Task(
                id=f"ev-{n:02d}-{slug}",
                task=text,
                setup_commands=setup + extra,
                success_condition=check,
                family="everyday",
                gold=Gold(commands=gold, answer_template="{out}", wrong_answers=wrong),
            )
        )
    return tasks
