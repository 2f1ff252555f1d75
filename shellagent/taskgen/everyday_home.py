"""The home folder every everyday task starts from: Downloads, Documents, projects, logs.

The contents are data here, and the setup commands and the facts the checks rely on are
both derived from that data, so a check can never disagree with what the setup made.
Ages are relative to now (``touch -d 'N days ago'``); everything else is fixed.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TypedDict

from shellagent.taskgen.sh import q

KIB = 1024


@dataclass(frozen=True)
class Download:
    name: str
    size: int
    days: int
    kind: str = "data"  # data, jpeg, png, empty, copy-of:<name>, zip, tar


DOWNLOADS = (
    Download("old-installer.exe", 5220 * KIB, 400),
    Download("setup-tool_v2.3.1.deb", 3276 * KIB, 15),
    Download("podcast-episode-12.mp3", 2662 * KIB, 120),
    Download("holiday-photos.zip", 0, 200, "zip"),
    Download("IMG_2041.jpg", 921 * KIB, 10, "jpeg"),
    Download("IMG_2042.jpg", 880 * KIB, 12, "jpeg"),
    Download("IMG_2042 (1).jpg", 880 * KIB, 9, "copy-of:IMG_2042.jpg"),
    Download("tax-return-2023.pdf", 412 * KIB, 40),
    Download("diagram.jpg", 0, 20, "png"),
    Download("budget-2024.xlsx", 64 * KIB, 60),
    Download("ubuntu-notes.txt", 6 * KIB, 3),
    Download("site-backup.tar.gz", 0, 30, "tar"),
    Download("empty-note.txt", 0, 1, "empty"),
    Download("meeting-agenda.docx", 18 * KIB, 0),
)
# holiday-photos.zip is stored (zip -0), so its size is about the sum of these.
ZIP_MEMBERS = (("beach-day.jpg", 700 * KIB), ("sunset.jpg", 640 * KIB), ("family.jpg", 500 * KIB))
TAR_MEMBERS = ("site/index.html", "site/config.php", "site/css/main.css", "site/img/logo.png")

JPEG_MAGIC = r"\377\330\377\340\0\20JFIF\0"
PNG_MAGIC = r"\211PNG\r\n\032\n\0\0\0\rIHDR\0\0\0\20\0\0\0\20\10\2\0\0\0"


def fill_bytes(size: int, word: str) -> bytes:
    """What ``yes WORD | head -c SIZE`` writes."""
    line = (word + "\n").encode()
    return (line * (size // len(line) + 1))[:size]


def sha256_of_fill(size: int, word: str) -> str:
    return hashlib.sha256(fill_bytes(size, word)).hexdigest()


def _fill(path: str, size: int, word: str) -> str:
    return f"yes {word} | head -c {size} > {path}"


def downloads_setup() -> str:
    lines = ["mkdir -p ~/Downloads /tmp/zip /tmp/site && cd ~/Downloads"]
    for d in DOWNLOADS:
        name = q(d.name)
        if d.kind == "data":
            lines.append(_fill(name, d.size, d.name.split(".")[0]))
        elif d.kind == "jpeg":
            lines.append(
                f"{{ printf '{JPEG_MAGIC}'; yes {d.name[:8]} | head -c {d.size - 11}; }} > {name}"
            )
        elif d.kind == "png":
            lines.append(f"printf '{PNG_MAGIC}' > {name}")
        elif d.kind == "empty":
            lines.append(f": > {name}")
        elif d.kind.startswith("copy-of:"):
            lines.append(f"cp {q(d.kind.split(':', 1)[1])} {name}")
        elif d.kind == "zip":
            lines += [_fill(f"/tmp/zip/{m}", size, m[:5]) for m, size in ZIP_MEMBERS]
            lines.append(f"(cd /tmp/zip && zip -q -0 ~/Downloads/{name} *) && rm -r /tmp/zip")
        elif d.kind == "tar":
            lines.append("mkdir -p /tmp/site/site/css /tmp/site/site/img")
            lines += [f"echo {m} > /tmp/site/{m}" for m in TAR_MEMBERS]
            lines.append(f"tar -czf {name} -C /tmp/site site && rm -r /tmp/site")
        lines.append(f"touch -d '{d.days} days ago' {name}")
    return "\n".join(lines)


# -- Documents -----------------------------------------------------------------------------

CV = (
    "# Alex Moreno",
    "Software tester with eight years of experience in web shops.",
    "",
    "## Skills",
    "Shell scripting, Python, SQL and patient bug reports.",
    "",
    "## Languages",
    "Spanish, English and some German.",
)
CV_WORDS = sum(len(line.split()) for line in CV)

NOTES = {
    "dentist.md": ("Dentist appointment on 3 March at 9:30.", "Bring the insurance card."),
    "groceries.md": ("oat milk", "coffee beans", "lemons"),
    "ideas.md": ("Build a bird feeder.", "Learn to juggle."),
    "todo.md": ("Call the dentist about the bill.", "Renew the passport."),
}

CONTACTS = (
    ("Jonas Weber", "jonas.weber@example.org", "Berlin"),
    ("Ines Duarte", "ines.duarte@example.org", "Lisbon"),
    ("Kofi Mensah", "kofi.mensah@example.org", "Berlin"),
    ("Lena Novak", "lena.novak@example.org", "Prague"),
    ("Omar Sayed", "omar.sayed@example.org", "Berlin"),
    ("Priya Nair", "priya.nair@example.org", "Dublin"),
    ("Sven Olsen", "sven.olsen@example.org", "Oslo"),
    ("Zoe Fontaine", "zoe.fontaine@example.org", "Lyon"),
)

EXPENSES = (
    ("2024-04-02", "groceries", 54),
    ("2024-04-03", "transport", 30),
    ("2024-04-05", "rent", 850),
    ("2024-04-09", "groceries", 61),
    ("2024-04-12", "eating out", 42),
    ("2024-04-15", "utilities", 120),
    ("2024-04-18", "groceries", 47),
    ("2024-04-20", "transport", 30),
    ("2024-04-24", "eating out", 38),
    ("2024-04-28", "books", 25),
)


class Book(TypedDict):
    title: str
    author: str
    year: int
    read: bool


BOOKS: tuple[Book, ...] = (
    {
        "title": "The Left Hand of Darkness",
        "author": "Ursula K. Le Guin",
        "year": 1969,
        "read": True,
    },
    {"title": "Piranesi", "author": "Susanna Clarke", "year": 2020, "read": False},
    {"title": "Invisible Cities", "author": "Italo Calvino", "year": 1972, "read": True},
    {"title": "Klara and the Sun", "author": "Kazuo Ishiguro", "year": 2021, "read": False},
    {"title": "The Remains of the Day", "author": "Kazuo Ishiguro", "year": 1989, "read": True},
    {"title": "Station Eleven", "author": "Emily St. John Mandel", "year": 2014, "read": False},
)

# (relative path, size in KiB) of the files that give each Documents subfolder its size.
DOCUMENT_FILES = (
    ("taxes/2022/summary.pdf", 180),
    ("taxes/2023/summary.pdf", 200),
    ("taxes/2023/receipts.pdf", 340),
    ("letters/landlord-2023.pdf", 40),
    ("letters/bank.txt", 4),
    ("photos/passport-scan.pdf", 900),
    ("photos/flat-viewing.jpg", 1600),
    ("manuals/washing-machine.pdf", 760),
)
PDF_COUNT = sum(1 for p, _ in DOCUMENT_FILES if p.endswith(".pdf"))


def documents_setup() -> str:
    lines = ["mkdir -p ~/Documents/notes && cd ~/Documents"]
    for rel, kib in DOCUMENT_FILES:
        lines.append(f"mkdir -p {q(rel.rsplit('/', 1)[0])} && {_fill(q(rel), kib * KIB, 'doc')}")
    lines.append(f"printf '%s\\n' {' '.join(q(line) for line in CV)} > cv.md")
    for name, text in NOTES.items():
        lines.append(f"printf '%s\\n' {' '.join(q(t) for t in text)} > notes/{name}")
    rows = ["name,email,city", *(",".join(c) for c in CONTACTS)]
    lines.append(f"printf '%s\\n' {' '.join(q(r) for r in rows)} > contacts.csv")
    rows = ["date,category,amount", *(f"{d},{c},{a}" for d, c, a in EXPENSES)]
    lines.append(f"printf '%s\\n' {' '.join(q(r) for r in rows)} > expenses.csv")
    lines.append(f"echo {q(json.dumps(BOOKS, indent=2))} > books.json")
    lines.append("chmod 700 taxes")
    lines.append("find . -type f -exec touch -d '10 days ago' {} +")
    lines.append("touch -d '2 days ago' cv.md notes/*.md contacts.csv expenses.csv books.json")
    lines.append("touch -d '5 hours ago' notes/todo.md")
    return "\n".join(lines)


# -- projects ------------------------------------------------------------------------------

WEBSHOP_COMMITS = (
    # author, message, {file: content}
    ("Ines Duarte", "start the webshop", {
        "package.json": json.dumps({"name": "webshop", "version": "2.4.0"}, indent=2),
        "src/app.js": "const cart = require('./cart');\n// TODO: read the port from config\n",
        "src/cart.js": "module.exports = {};\n// TODO: persist the cart\n",
        "src/checkout.js": "// TODO: handle declined cards\nmodule.exports = {};\n",
        "README.md": "# Webshop\n\nA tiny store.\n",
        "config.json": json.dumps({"port": 8081, "currency": "EUR"}, indent=2),
        "nginx.conf": "worker_processes 2;\nclient_max_body_size 10m;\n",
    }),
    ("Kofi Mensah", "add the checkout page", {
        "src/checkout.js": "// TODO: handle declined cards\nmodule.exports = { pay() {} };\n",
    }),
    ("Ines Duarte", "release 2.4.1", {
        "package.json": json.dumps({"name": "webshop", "version": "2.4.1"}, indent=2),
    }),
    ("Lena Novak", "fix the cart total and document it", {
        "src/cart.js": "module.exports = { total: 0 };\n// TODO: persist the cart\n",
        "README.md": "# Webshop\n\nA tiny store. Cart totals are in cents.\n",
    }),
)  # fmt: skip
WEBSHOP_TODOS = 3

DATAPROC_FILES = {
    "requirements.txt": "requests==2.31.0\npandas==2.1.4\nnumpy>=1.26\n",
    "main.py": "\n".join(f"step_{i} = {i}" for i in range(1, 41)) + "\n",
    "scripts/clean.py": "#!/usr/bin/env python3\nprint('clean')\n",
    "scripts/load.py": "#!/usr/bin/env python3\nimport csv\nprint('load')\n",
    "scripts/report.py": "#!/usr/bin/env python3\nprint('report')\n",
    "tests/test_clean.py": "def test_clean():\n    assert True\n",
}
DATAPROC_PY_LINES = sum(
    text.count("\n") for name, text in DATAPROC_FILES.items() if name.endswith(".py")
)

CRONTAB = (
    "# m h dom mon dow command",
    "30 2 * * * /home/alex/bin/backup.sh",
    "0 0 * * * /home/alex/bin/rotate-photos.sh",
    "*/20 * * * * /home/alex/bin/check-mail.sh",
    "0 9 * * 1 /home/alex/bin/weekly-report.sh",
)


def _commit(n: int, author: str, message: str) -> str:
    email = author.lower().replace(" ", ".") + "@example.org"
    stamp = f"2024-05-{n + 1:02d}T10:00:00+00:00"
    return (
        f"git add -A && GIT_AUTHOR_NAME={q(author)} GIT_AUTHOR_EMAIL={email} "
        f"GIT_COMMITTER_NAME={q(author)} GIT_COMMITTER_EMAIL={email} "
        f"GIT_AUTHOR_DATE={stamp} GIT_COMMITTER_DATE={stamp} git commit -qm {q(message)}"
    )


def projects_setup() -> str:
    lines = ["mkdir -p ~/projects/webshop/src && cd ~/projects/webshop && git init -q -b main"]
    for n, (author, message, files) in enumerate(WEBSHOP_COMMITS):
        for name, text in files.items():
            lines.append(f"printf '%s' {q(text)} > {name}")
        lines.append(_commit(n, author, message))
        if message == "add the checkout page":
            lines.append("git tag v2.4.0")
        if message == "release 2.4.1":
            lines.append("git tag v2.4.1 && git branch feature/payments")
    lines.append("cp nginx.conf nginx.conf.bak && sed -i 's/10m/50m/' nginx.conf")
    lines.append("echo scratch > notes.tmp && chmod 666 notes.tmp")
    lines.append("mkdir -p ~/projects/dataproc/scripts ~/projects/dataproc/tests")
    lines.append("cd ~/projects/dataproc")
    for name, text in DATAPROC_FILES.items():
        lines.append(f"printf '%s' {q(text)} > {name}")
    lines.append("chmod 755 scripts/clean.py && chmod 644 scripts/load.py scripts/report.py")
    lines.append("chmod 666 requirements.txt")
    lines.append("mkdir -p ~/projects/dotfiles && cd ~/projects/dotfiles")
    lines.append(f"printf '%s\\n' {' '.join(q(c) for c in CRONTAB)} > crontab.txt")
    lines.append(
        "cd ~/projects && ln -s webshop shop && ln -s dataproc/out/latest.csv latest-report"
    )
    return "\n".join(lines)


# -- logs ----------------------------------------------------------------------------------

APP_LOG = (
    "2024-05-06 08:00:01 INFO Starting webshop 2.4.0",
    "2024-05-06 08:00:03 INFO listening on port 8081",
    "2024-05-06 09:12:44 WARN slow query on orders (1.8s)",
    "2024-05-06 10:05:10 INFO user=maria signed in",
    "2024-05-06 11:30:02 ERROR payment gateway timeout",
    "2024-05-06 12:41:19 INFO user=tom signed in",
    "2024-05-06 15:02:55 WARN cache miss storm",
    "2024-05-06 18:20:00 INFO user=maria placed order 1042",
    "2024-05-07 08:00:02 INFO Starting webshop 2.4.1",
    "2024-05-07 08:15:37 WARN slow query on products (2.3s)",
    "2024-05-07 09:48:12 ERROR database connection refused",
    "2024-05-07 10:01:09 WARN retrying database connection",
    "2024-05-07 10:01:40 WARN retrying database connection",
    "2024-05-07 10:02:11 WARN disk usage at 91%",
    "2024-05-07 13:22:08 INFO user=maria signed in",
    "2024-05-07 16:45:51 ERROR invalid coupon code format",
    "2024-05-08 07:59:58 INFO Starting webshop 2.4.1",
    "2024-05-08 09:30:27 INFO user=tom placed order 1043",
    "2024-05-08 11:11:11 WARN slow query on orders (1.2s)",
    "2024-05-08 14:03:36 ERROR template not found: invoice.html",
    "2024-05-08 17:27:45 INFO user=maria signed out",
)


def hits() -> list[tuple[str, str, int]]:
    """(ip, path, status) of every request in access.log, in order."""
    plan = (
        ("10.0.0.7", "/", 200), ("10.0.0.7", "/cart", 200), ("192.168.1.20", "/", 200),
        ("10.0.0.7", "/api/orders", 500), ("172.16.4.2", "/favicon.ico", 404),
        ("10.0.0.7", "/checkout", 200), ("192.168.1.20", "/api/orders", 500),
        ("10.0.0.9", "/old-page", 404), ("10.0.0.7", "/cart", 200),
        ("192.168.1.20", "/api/items", 200), ("10.0.0.7", "/api/orders", 500),
        ("172.16.4.2", "/login", 200), ("10.0.0.9", "/api/items", 500),
        ("10.0.0.7", "/robots.txt", 404), ("192.168.1.20", "/checkout", 200),
        ("10.0.0.7", "/", 200),
    )  # fmt: skip
    return list(plan)


ACCESS_LOG = tuple(
    f'{ip} - - [08/May/2024:10:{i:02d}:00 +0000] "GET {p} HTTP/1.1" {s} {512 + 37 * i}'
    for i, (ip, p, s) in enumerate(hits())
)

BACKUP_LOG = (
    "2024-05-04 02:30 backup started",
    "2024-05-04 02:41 backup finished OK (1.2 GB)",
    "2024-05-05 02:30 backup started",
    "2024-05-05 02:33 backup FAILED: destination disk not mounted",
    "2024-05-06 02:30 backup started",
    "2024-05-06 02:44 backup finished OK (1.3 GB)",
)


def logs_setup() -> str:
    lines = ["mkdir -p ~/logs && cd ~/logs"]
    for name, content in (
        ("app.log", APP_LOG),
        ("access.log", ACCESS_LOG),
        ("backup.log", BACKUP_LOG),
    ):
        lines.append(f"printf '%s\\n' {' '.join(q(line) for line in content)} > {name}")
    return "\n".join(lines)


def home_setup() -> tuple[str, ...]:
    """The setup commands shared by every everyday task."""
    return (downloads_setup(), documents_setup(), projects_setup(), logs_setup())
