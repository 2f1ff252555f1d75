"""Secrets found by their structure, and their look-alikes: the third part of the corpus.

``secret_corpus.toml`` (hand-written) and ``secret_shapes.py`` (built) hold mostly one form
per shape. This corpus holds the forms around them: a secret as the value of a setting in
JSON, YAML, INI, XML and HTTP headers of any scheme, in URLs (userinfo, Oracle's
``user/password@host``, query strings), as the argument of the command that takes it,
wrapped in base64, next to a word that names it in prose, and the vendor tokens of the
third review with the bodies real ones have (not one fixed length), with the look-alikes
each form has in ordinary output. It was written before the rules that catch it, to
measure them; its cases are not changed to pass.

Bodies are made from a seeded random generator, as in ``secret_shapes.py``, so every run
builds the same fake secrets and no file holds a token that looks live. Bitcoin keys carry a
valid Base58Check checksum, as real ones do. ``tests/transcript/test_secret_structures.py``
holds every case; ``bench/redact_bench.py`` prints the share redacted.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string

from .secret_shapes import Shape

HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
UPPER = string.ascii_uppercase + string.digits
LOWER = string.ascii_lowercase + string.digits
BASE32 = "abcdefghijklmnopqrstuvwxyz234567"
_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


class _Maker:
    """Random bodies for one case, the same on every run."""

    def __init__(self, name: str) -> None:
        self.rng = random.Random(f"secret-structures/{name}")

    def __call__(self, alphabet: str, n: int) -> str:
        body = "".join(self.rng.choice(alphabet) for _ in range(n))
        if alphabet in (ALNUM, B64, B64URL) and n >= 8:
            body = "".join(self.rng.sample("aZ7" + body[3:], n))  # mixed, as real ones are
        return body

    def bytes(self, n: int) -> bytes:
        return bytes(self.rng.randrange(256) for _ in range(n))


def _base58check(payload: bytes) -> str:
    data = payload + hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4]
    n = int.from_bytes(data, "big")
    out = ""
    while n:
        n, r = divmod(n, 58)
        out = _BASE58[r] + out
    return "1" * (len(data) - len(data.lstrip(b"\0"))) + out


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _secrets() -> list[Shape]:
    out: list[Shape] = []

    def add(name: str, text: str, *secrets: str) -> None:
        out.append(Shape(name, text, secrets))

    def one(name: str, template: str, alphabet: str = ALNUM, n: int = 32, prefix: str = "") -> str:
        secret = prefix + _Maker(name)(alphabet, n)
        add(name, template.format(secret), secret)
        return secret

    # --- the review's vendor tokens, as real ones are written ---------------------------
    m = _Maker("azure devops pat new")
    ado = m(ALNUM, 52) + "JQQJ99" + m(ALNUM, 18) + "AZDO" + m(ALNUM, 4)
    add("Azure DevOps PAT (84 characters, AZDO)", f"echo {ado} | az devops login", ado)
    one("Azure DevOps PAT (52, base32) in AZURE_DEVOPS_PAT", "AZURE_DEVOPS_PAT={}", BASE32, 52)
    one("Azure DevOps PAT in a pipeline's YAML", "  variables:\n    pat: {}\n", BASE32, 52)
    m = _Maker("grafana glsa")
    glsa = f"glsa_{m(ALNUM, 32)}_{m(HEX, 8)}"
    add(
        "Grafana glsa_ in a curl header",
        f'curl -H "Authorization: Bearer {glsa}" https://g/api',
        glsa,
    )
    m = _Maker("grafana glsa bare")
    glsa = f"glsa_{m(ALNUM, 32)}_{m(HEX, 8)}"
    add("Grafana glsa_ alone in output", f"Service account token created: {glsa}", glsa)
    one("Doppler service token dp.st.ENV.", "DOPPLER_TOKEN_VALUE {}", ALNUM, 40, "dp.st.prd.")
    one("Doppler CLI token dp.ct.", "doppler configure set token {} --scope /", ALNUM, 43, "dp.ct.")
    one("Pulumi pul- in output", "pulumi login: using access token {}", HEX, 40, "pul-")
    m = _Maker("postman")
    pm = "PMAK-" + m(HEX, 24) + "-" + m(HEX, 34)
    add("Postman PMAK- in JSON", f'{{"postman": "{pm}"}}', pm)
    one("Databricks dapi with a -2 suffix", "host = x\ntoken_value = {}-2", HEX, 32, "dapi")
    one("Databricks dapi in a CLI profile", "[DEFAULT]\nhost = https://adb.example.net\n{}",
        "abcdefgh0123456789", 32, "dapi")  # fmt: skip
    m = _Maker("brevo")
    bv = "xkeysib-" + m(HEX, 64) + "-" + m(ALNUM, 16)
    add("Brevo xkeysib- bare", bv, bv)
    m = _Maker("brevo smtp")
    bv = "xsmtpsib-" + m(HEX, 64) + "-" + m(ALNUM, 16)
    add("Brevo SMTP xsmtpsib-", f"smtp_login: {bv}", bv)
    m = _Maker("mailchimp")
    mc = m(HEX, 32) + "-us21"
    add("Mailchimp key -us21 in JSON", f'{{"mc": "{mc}"}}', mc)
    m = _Maker("braintree")
    bt = f"access_token$production${m(LOWER, 16)}${m(HEX, 32)}"
    add("Braintree access_token$production$", f"gateway = braintree({bt!r})", bt)
    one("Figma figd_", "figma: {}", B64URL, 40, "figd_")
    m = _Maker("cloudflare origin")
    cf = "v1.0-" + m(HEX, 24) + "-" + m(HEX, 146)
    add("Cloudflare origin CA key in a YAML", f"origin_ca: {cf}", cf)
    one("Supabase sbp_ in a CI log", "Using access token {}", HEX, 40, "sbp_")
    m = _Maker("dropbox")
    dbx = "sl.B" + m(B64URL, 134)
    add("Dropbox sl. short-lived token", f"dropbox: {dbx}", dbx)
    m = _Maker("dropbox u")
    dbx = "sl.u." + m(B64URL, 150)
    add("Dropbox sl.u. token", dbx, dbx)
    m = _Maker("asana")
    asana = f"1/{m('0123456789', 16)}:{m(HEX, 32)}"
    add("Asana 1/…:… personal access token", f"asana {asana}", asana)
    m = _Maker("asana 2")
    asana = f"2/{m('0123456789', 16)}/{m('0123456789', 16)}:{m(HEX, 32)}"
    add("Asana 2/…/…:… personal access token", f"ASANA={asana}", asana)
    one("1Password service account ops_eyJ", "op: {}", B64URL, 300, "ops_eyJ")
    one("Sourcegraph sgp_ (40 hex)", "src: {}", HEX, 40, "sgp_")
    m = _Maker("sourcegraph local")
    sg = f"sgp_{m(HEX, 16)}_{m(HEX, 40)}"
    add("Sourcegraph sgp_ with an instance id", sg, sg)
    m = _Maker("twitter")
    tw = "A" * 21 + m(ALNUM, 11) + "A" * 8 + m(ALNUM, 6) + "%2B" + m(ALNUM, 10) + "%2F"
    tw += m(ALNUM, 12) + "%3D" + m(ALNUM, 50)
    add("Twitter bearer AAAA…%3D… (21 A)", f"bearer_value: {tw}", tw)
    m = _Maker("langsmith")
    ls = f"lsv2_pt_{m(HEX, 32)}_{m(HEX, 10)}"
    add("LangSmith lsv2_pt_ in a notebook", f"os.environ['LC'] = '{ls}'", ls)
    m = _Maker("langsmith sk")
    ls = f"lsv2_sk_{m(HEX, 32)}_{m(HEX, 10)}"
    add("LangSmith lsv2_sk_", ls, ls)
    m = _Maker("minisign")
    mini = base64.b64encode(b"EdScB2" + m.bytes(152)).decode()
    add(
        "minisign secret key file",
        f"untrusted comment: minisign encrypted secret key\n{mini}\n",
        mini,
    )
    m = _Maker("signify")
    sig = base64.b64encode(b"EdBK" + m.bytes(100)).decode()
    add("signify secret key file", f"untrusted comment: signify secret key\n{sig}\n", sig)
    m = _Maker("wif compressed")
    wif = _base58check(b"\x80" + m.bytes(32) + b"\x01")
    add("Bitcoin WIF (compressed, K/L)", f"importprivkey {wif}", wif)
    m = _Maker("wif uncompressed")
    wif = _base58check(b"\x80" + m.bytes(32))
    add(
        "Bitcoin WIF (uncompressed, 5…) in a wallet dump", f"{wif} 2024-01-01T00:00:00Z label=", wif
    )
    m = _Maker("xprv")
    xprv = _base58check(bytes.fromhex("0488ade4") + m.bytes(9) + m.bytes(32) + b"\0" + m.bytes(32))
    add("BIP32 extended private key xprv", f"wallet master key: {xprv}", xprv)

    # --- other vendors with documented prefixes -----------------------------------------
    one("Google OAuth client secret GOCSPX-", "client: {}", B64URL, 28, "GOCSPX-")
    one("OpenShift token sha256~", "$ oc whoami -t\n{}", B64URL, 43, "sha256~")
    m = _Maker("salesforce")
    sf = f"00D{m(ALNUM, 12)}!{m(ALNUM + '.', 96)}"
    add("Salesforce session id 00D…!…", f"sf: {sf}", sf)
    m = _Maker("akamai")
    ak = f"akab-{m(LOWER, 16)}-{m(LOWER, 16)}"
    add("Akamai EdgeGrid client token akab-", f"client_token_value {ak}", ak)
    one("EasyPost EZAK", "easypost {}", HEX, 54, "EZAK")
    one("Tencent Cloud AKID", "tccli configure: {}", ALNUM, 32, "AKID")
    one("Yandex Cloud API key AQVN", "yc: {}", B64URL, 36, "AQVN")
    one("Adafruit IO aio_", "aio: {}", ALNUM, 28, "aio_")
    one("Frame.io fio-u-", "frameio {}", B64URL, 64, "fio-u-")
    one("Duffel duffel_live_", "duffel {}", B64URL, 43, "duffel_live_")
    one("crates.io cio", "cargo login {}", ALNUM, 32, "cio")
    m = _Maker("telnyx")
    tx = f"KEY{m('0123456789ABCDEF', 32)}_{m(ALNUM, 22)}"
    add("Telnyx KEY…_…", f"telnyx: {tx}", tx)
    m = _Maker("harness")
    hn = f"pat.{m(B64URL, 22)}.{m(HEX, 24)}.{m(ALNUM, 20)}"
    add("Harness pat.…", f"harness: {hn}", hn)
    one("Hugging Face org token api_org_", "hf org: {}", ALNUM, 34, "api_org_")
    one("Docker Hub org token dckr_oat_", "registry auth {}", B64URL, 32, "dckr_oat_")
    one("Twitch oauth:", "PASS {}", LOWER, 30, "oauth:")
    m = _Maker("clickup")
    cu = f"pk_{m('0123456789', 8)}_{m(UPPER, 32)}"
    add("ClickUp pk_NNN_…", f"clickup {cu}", cu)
    one("Firecrawl fc-", "firecrawl {}", HEX, 32, "fc-")
    m = _Maker("grafana legacy")
    gl = base64.b64encode(json.dumps({"k": m(ALNUM, 32), "n": "deploy", "id": 1}).encode()).decode()
    add("Grafana legacy API key eyJrIjoi", f"grafana: {gl}", gl)
    m = _Maker("teams webhook")
    teams = (
        f"https://acme.webhook.office.com/webhookb2/{m(HEX, 8)}-{m(HEX, 4)}-{m(HEX, 4)}-"
        f"{m(HEX, 4)}-{m(HEX, 12)}@{m(HEX, 8)}-{m(HEX, 4)}-{m(HEX, 4)}-{m(HEX, 4)}-"
        f"{m(HEX, 12)}/IncomingWebhook/{m(HEX, 32)}/{m(HEX, 8)}-{m(HEX, 4)}-{m(HEX, 4)}-"
        f"{m(HEX, 4)}-{m(HEX, 12)}"
    )
    add("Microsoft Teams webhook URL", f"hook: {teams}", teams.split("/IncomingWebhook/")[1][:32])
    m = _Maker("jwk")
    d, p, q = m(B64URL, 86), m(B64URL, 43), m(B64URL, 43)
    jwk = json.dumps({"kty": "RSA", "e": "AQAB", "n": m(B64URL, 86), "d": d, "p": p, "q": q})
    add("JWK private key (d, p, q)", jwk, d, p, q)

    # --- settings: JSON, YAML, INI, XML, env ----------------------------------------------
    add("XML <password> (Maven settings.xml)",
        "<server>\n  <id>nexus</id>\n  <username>ci</username>\n"
        "  <password>Plover-Quay-61</password>\n</server>", "Plover-Quay-61")  # fmt: skip
    one("XML <apikey> (Syncthing config.xml)",
        '<gui enabled="true">\n  <apikey>{}</apikey>\n</gui>', ALNUM, 32)  # fmt: skip
    add("XML option name/value (JetBrains security.xml)",
        '<option name="password" value="Gannet-Ridge-27" />', "Gannet-Ridge-27")  # fmt: skip
    one(".NET appSettings add key/value", '<add key="StripeSecretKey" value="{}" />', ALNUM, 40)
    add("OpenVPN inline auth-user-pass",
        "<auth-user-pass>\nalice\nMarten-Cove-38\n</auth-user-pass>", "Marten-Cove-38")  # fmt: skip
    one("YAML key under a nested mapping", "stripe:\n  live:\n    secret: {}\n", ALNUM, 40)
    one("TOML http-basic (poetry auth.toml)", '[http-basic.acme]\nusername = "ci"\npassword = "{}"',
        ALNUM, 20)  # fmt: skip
    one("JSON refreshToken camelCase", '{{"refreshToken":"{}","expiresIn":3600}}', B64URL, 48)
    one("Python dict with X-Api-Key", 'headers = {{"X-Api-Key": "{}"}}', ALNUM, 32)
    one("Azure Functions key header", 'curl -H "x-functions-key: {}" https://f.example', B64URL, 54)
    one("Ocp-Apim-Subscription-Key header", "Ocp-Apim-Subscription-Key: {}", HEX, 32)
    one("fish set -gx GITHUB_TOKEN", "set -gx GITHUB_TOKEN {}", ALNUM, 40)
    one("Windows setx API_TOKEN", "setx API_TOKEN {}", ALNUM, 36)
    one("Java properties with spaces", "jwt.signing.key = {}", B64, 44)
    one("SESSION_SECRET in docker run", "docker run -e SESSION_SECRET={} app", ALNUM, 32)

    # --- HTTP headers of any scheme, cookies ----------------------------------------------
    m = _Maker("digest")
    resp, cnonce = m(HEX, 32), m(HEX, 16)
    add(
        "Authorization: Digest … response=",
        f'Authorization: Digest username="svc", realm="api@acme", nonce="{m(HEX, 32)}", '
        f'uri="/v1/items", qop=auth, nc=00000001, cnonce="{cnonce}", response="{resp}", '
        "algorithm=MD5",
        resp,
    )
    m = _Maker("digest curl")
    resp = m(HEX, 64)
    add(
        "curl -v shows a Digest response",
        f'> GET /status HTTP/1.1\n> Authorization: Digest username="admin", realm="cam", '
        f'nonce="{m(HEX, 24)}", uri="/status", response="{resp}", algorithm=SHA-256\n',
        resp,
    )
    m = _Maker("oauth1")
    osig = m(B64, 27) + "%3D"
    add(
        "Authorization: OAuth … oauth_signature=",
        f'Authorization: OAuth oauth_consumer_key="app", oauth_token="{m(ALNUM, 40)}", '
        f'oauth_signature_method="HMAC-SHA1", oauth_signature="{osig}"',
        osig,
    )
    m = _Maker("sigv4")
    s4 = m(HEX, 64)
    add(
        "Authorization: AWS4-HMAC-SHA256 … Signature=",
        "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240101/us-east-1/s3/"
        f"aws4_request, SignedHeaders=host;x-amz-date, Signature={s4}",
        s4,
    )
    m = _Maker("connect sid")
    sid = "s%3A" + m(B64URL, 32) + "." + m(B64, 43).replace("+", "%2B").replace("/", "%2F")
    add("connect.sid cookie in curl -b", f"curl -b 'connect.sid={sid}' https://app/api", sid)
    m = _Maker("connect sid jar")
    sid = "s%3A" + m(B64URL, 32) + "." + m(B64URL, 43)
    add("connect.sid in a Netscape cookie jar",
        f"# Netscape HTTP Cookie File\napp.example.com\tFALSE\t/\tTRUE\t0\tconnect.sid\t{sid}",
        sid)  # fmt: skip
    one("Set-Cookie sessionid with attributes", "< Set-Cookie: sessionid={}; HttpOnly; Path=/",
        LOWER, 32)  # fmt: skip
    one("PHPSESSID in a log line", "GET /admin PHPSESSID={} 200", LOWER, 26)
    one("JSESSIONID in a URL path", "https://shop.example.com/cart;jsessionid={}?x=1", UPPER, 32)

    # --- URLs: userinfo, Oracle EZConnect, query tokens ----------------------------------
    add("sqlplus user/password@//host:port/service",
        "sqlplus scott/Tiger-Reef-42@//db.acme.local:1521/ORCLPDB1", "Tiger-Reef-42")  # fmt: skip
    add("sqlldr userid=user/password@tns",
        "sqlldr userid=loader/Quartz-Fen-9@orcl control=load.ctl", "Quartz-Fen-9")  # fmt: skip
    add("expdp user/password@tns", "expdp system/Manager-Vale-7@prod schemas=HR dumpfile=hr.dmp",
        "Manager-Vale-7")  # fmt: skip
    add("impdp user/\"quoted password\"@tns",
        'impdp admin/"Otter#Bay-5"@PDB1 directory=DP dumpfile=a.dmp', "Otter#Bay-5")  # fmt: skip
    add("rman target user/password@tns", "rman target sys/Sable-Crest-3@prod", "Sable-Crest-3")
    add("JDBC thin user/password@host", "url=jdbc:oracle:thin:app/Mesa-Drift-8@db-host:1521:ORCL",
        "Mesa-Drift-8")  # fmt: skip
    add("EZConnect string in a config", 'dsn = "report/Heron-Lake-72@reports.acme:1521/REPORTS"',
        "Heron-Lake-72")  # fmt: skip
    add("URL password holding an @", "postgresql://app:p@ss-Gale-81@db.local:5432/app",
        "p@ss-Gale-81")  # fmt: skip
    add("mysqlsh user:password@host", "mysqlsh root:Cobalt-Wren-55@localhost:3306",
        "Cobalt-Wren-55")  # fmt: skip
    one("OAuth code in a callback URL", "GET /callback?code={}&state=xyz HTTP/1.1", B64URL, 40)
    one("?apikey= in a URL", "https://api.example.com/v2/quote?symbol=ACME&apikey={}", UPPER, 16)
    one("wss:// ?auth= query", "wss://stream.example.com/socket?auth={}", B64URL, 40)

    # --- commands that take a secret as an argument --------------------------------------
    one("vault login TOKEN (legacy s.)", "vault login {}", ALNUM, 24, "s.")
    one("vault login -method=token TOKEN", "vault login -method=token {}", B64URL, 40)
    add("curl with combined flags -sSfu user:pass",
        "curl -sSfu admin:Lynx-Harbor-26 https://ci.example.com/api", "Lynx-Harbor-26")  # fmt: skip
    add("plink -pw PASS", "plink -ssh -pw Falcon-Moor-12 admin@10.0.0.4", "Falcon-Moor-12")
    add("pscp -pw PASS", "pscp -pw Falcon-Moor-13 backup.tar admin@10.0.0.4:/tmp", "Falcon-Moor-13")
    add("net use with a password", r"net use Z: \\fs\share Wren-Lattice-40 /user:corp\alice",
        "Wren-Lattice-40")  # fmt: skip
    m = _Maker("minio")
    secret = m(B64, 40).replace("/", "x").replace("+", "y")
    add("mc alias set NAME URL ACCESS SECRET",
        f"mc alias set minio http://minio:9000 minioadmin7 {secret}", secret)  # fmt: skip
    add("wpa_passphrase SSID PASS", "wpa_passphrase HomeNet Orchard-Lamp-93", "Orchard-Lamp-93")
    add("nmcli … password PASS", "nmcli device wifi connect HomeNet password Orchard-Lamp-94",
        "Orchard-Lamp-94")  # fmt: skip
    one("ngrok config add-authtoken TOKEN", "ngrok config add-authtoken 2{}", ALNUM, 48)
    one("gh secret set NAME --body VALUE", "gh secret set DEPLOY_KEY --body {}", ALNUM, 40)
    add("openssl passwd -6 PASS", "openssl passwd -6 Bramble-Pike-71", "Bramble-Pike-71")
    add("etcdctl --user root:PASS", "etcdctl --user root:Cedar-Flint-64 get /config",
        "Cedar-Flint-64")  # fmt: skip
    add("snmpwalk -A auth -X priv",
        "snmpwalk -v3 -u mon -l authPriv -a SHA -A Tansy-Bell-17 -x AES -X Tansy-Bell-18 sw1",
        "Tansy-Bell-17", "Tansy-Bell-18")  # fmt: skip
    add("yt-dlp -u USER -p PASS", "yt-dlp -u alice -p Ember-Sage-31 https://v.example/x",
        "Ember-Sage-31")  # fmt: skip
    add("cqlsh -u USER -p PASS", "cqlsh -u cassandra -p Juniper-Hale-45 db1", "Juniper-Hale-45")

    # --- base64-wrapped -----------------------------------------------------------------------
    m = _Maker("b64 ghp")
    ghp = "ghp_" + m(ALNUM, 36)
    add("base64 of a ghp_ token", f"echo {_b64(ghp)} | base64 -d", _b64(ghp))
    m = _Maker("b64 aws env")
    env = f"AWS_SECRET_ACCESS_KEY={m(B64, 40)}"
    add("base64 of AWS_SECRET_ACCESS_KEY=…", f"data:\n  creds: {_b64(env)}\n", _b64(env))
    m = _Maker("b64 dotenv")
    dotenv = (
        f"DB_PASSWORD=Sparrow-Glen-{m('0123456789', 2)}\nSTRIPE_KEY=sk_live_{m(ALNUM, 40)}\n"
        "DEBUG=false\n"
    )
    wrapped = base64.encodebytes(dotenv.encode()).decode()
    lines = [line for line in wrapped.splitlines() if line]
    add("base64 .env wrapped at 76 columns", f"$ base64 .env\n{wrapped}", *lines)
    m = _Maker("b64 docker")
    auth = _b64(f"ci:{m(ALNUM, 24)}")
    blob = _b64(json.dumps({"auths": {"registry.acme.io": {"auth": auth}}}))
    add("base64 .dockerconfigjson (k8s Secret)",
        f"data:\n  .dockerconfigjson: {blob}\ntype: kubernetes.io/dockerconfigjson",
        blob)  # fmt: skip
    m = _Maker("b64url json")
    bj = (
        base64.urlsafe_b64encode(json.dumps({"api_key": m(ALNUM, 32), "region": "eu"}).encode())
        .decode()
        .rstrip("=")
    )
    add("base64url of a JSON with api_key", f"config_blob={bj}", bj)
    m = _Maker("b64 url")
    bu = _b64(f"postgres://app:{m(ALNUM, 20)}@db.internal:5432/app")
    add("base64 of a database URL", f"DATABASE_URL_B64: {bu}", bu)

    # --- a random token next to a word that names it ------------------------------------
    one("prose: your API token is X", "Your new API token is {} (shown once)", ALNUM, 40)
    one("prose: token on the next line", "Personal access token (copy it now):\n  {}\n", B64URL, 44)
    one("prose: secret for the webhook", "The signing secret for this webhook: {}", ALNUM, 32)
    one("table row: name then credential", "client credential   {}   expires 2026-01-01", B64, 40)
    one("long random password in prose", "the root password is now {}", ALNUM + "!@#$%&*", 24)
    return out


SECRETS: list[Shape] = _secrets()


def _look_alikes() -> list[str]:
    m = _Maker("look-alikes")
    sha256 = hashlib.sha256(b"release").hexdigest()
    sha1 = hashlib.sha1(b"commit").hexdigest()
    md5 = hashlib.md5(b"file").hexdigest()
    wif_like = _base58check(b"\x00" + m.bytes(20))  # a P2PKH address: public
    xpub = _base58check(bytes.fromhex("0488b21e") + m.bytes(9) + m.bytes(32) + b"\x02"
                        + m.bytes(32))  # fmt: skip
    pub = base64.b64encode(b"Ed" + m.bytes(40)).decode()
    cert = base64.b64encode(
        b"-----BEGIN CERTIFICATE-----\nMIIC+TCCAeGgAwIBAgIU\n-----END CERTIFICATE-----\n"
    ).decode()
    return [
        # the documented examples and placeholders
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "export AWS_ACCESS_KEY_ID=AKIAI44QH8DHBEXAMPLE",
        "export GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "GITLAB_TOKEN=glpat-XXXXXXXXXXXXXXXXXXXX",
        "OPENAI_API_KEY=sk-...",
        "STRIPE_SECRET_KEY=sk_test_your_key_here",
        "SECRET_KEY=your-secret-key-here",
        "API_KEY=<your-api-key>",
        "DB_PASSWORD=${DB_PASSWORD}",
        "slack: xoxb-0000000000-0000000000-xxxxxxxxxxxxxxxxxxxxxxxx",
        # password= and token in prose
        "The login form posts password= followed by the value typed.",
        "Set password= in the [auth] section, then restart the service.",
        "The token expires in 3600 seconds; refresh it with the CLI.",
        "A session cookie is set after login and cleared at logout.",
        # hashes and ids in ordinary output
        f"commit {sha1}\nAuthor: Alice <alice@example.com>",
        f"{sha256}  release-1.4.2.tar.gz",
        f"{md5}  notes.txt",
        f'etag: "{sha1}"',
        "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "Started session 6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b of user alice.",
        "ORACLE_SID=ORCLCDB",
        "sid: S-1-5-21-3623811015-3361044348-30300820-1013",
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin",
        "session_timeout=3600 SESSION_COOKIE_NAME=sessionid",
        # key fingerprints, signatures and digests under secret-sounding words
        "ED25519 key fingerprint is SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8.",
        "Key fingerprint = 3AA5 C343 7156 7BD2 8D5E  9B2D 0B1D 1F7C 4B2A 9E01",
        "pub   rsa4096 2019-03-12 [SC]\n      8AB1C2D3E4F5061728394A5B6C7D8E9F0A1B2C3D",
        "DKIM-Signature: v=1; a=rsa-sha256; d=example.com; s=sel1; "
        "bh=2jUSOH9NhtVGCQWNr9BrIAPreKQjO6Sn7XIkfJVOzv8=; b=",
        "golang.org/x/net v0.17.0 h1:pVaXccu2ozPjCXewfr1S0xoGsTlCfbYXNGuVR7HcCmM=",
        f"requests==2.31.0 --hash=sha256:{sha256}",
        'WWW-Authenticate: Digest realm="api", qop="auth", '
        'nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"',
        # user/thing@host look-alikes of Oracle's user/password@host
        "uses: actions/checkout@v4",
        "uses: actions/setup-node@8f152de45cc393bb48ce5d89d36b731f54556e65",
        "npm ls: node_modules/@types/node@20.11.5",
        "go install golang.org/x/tools/gopls@v0.15.3",
        "sqlplus / as sysdba",
        "sqlplus scott@orcl",
        "expdp system@prod schemas=HR directory=DP dumpfile=hr.dmp",
        "docker pull ghcr.io/acme/api:1.4@sha256:" + sha256,
        # commands that take no secret here
        "vault login -method=oidc",
        "docker login -u alice registry.example.com",
        "curl -sSfL https://get.example.com/install.sh",
        "nmcli device wifi connect HomeNet --ask",
        "openssl passwd -6 -stdin < pw.txt",
        "gh secret set DEPLOY_KEY < key.txt",
        # base64 of ordinary things
        "echo " + _b64("This is a perfectly ordinary sentence.") + " | base64 -d",
        _b64('{"name":"demo","version":"1.0.0","private":true}'),
        _b64("Reset your password via the portal, then log in again."),
        _b64("token_type=bearer&expires_in=3600&scope=read"),
        "certificate-authority-data: " + cert,
        "head -c 48 /dev/urandom | base64\n" + base64.b64encode(m.bytes(48)).decode(),
        # public keys and addresses
        f"send to {wif_like}",
        f"account xpub: {xpub}",
        "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
        f"untrusted comment: minisign public key 3A0C5F\n{pub}",
        "Stripe.js: pk_live_51Hx" + m(ALNUM, 40),
    ]


LOOK_ALIKES: list[str] = _look_alikes()
