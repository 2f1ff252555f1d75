"""Secret shapes and their look-alikes, built in code: the second half of the secret corpus.

``secret_corpus.toml`` holds hand-written cases; the shapes here are made by ``SHAPES``
from a prefix and a random body of the right alphabet and length, seeded by the shape's
name, so every run builds the same fake secrets and no file of the repository holds a
token that looks live (push protection scans for them). Each shape is one text with its
secrets; ``LOOK_ALIKES`` are texts that look like secrets and are not: they must come out
of the redactor unchanged. ``tests/transcript/test_secret_shapes.py`` holds every line;
``bench/redact_bench.py`` prints the share redacted.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
UPPER = string.ascii_uppercase + string.digits
LOWER = string.ascii_lowercase + string.digits


@dataclass(frozen=True)
class Shape:
    name: str
    text: str
    secrets: tuple[str, ...]


class _Maker:
    """Random bodies for one shape, the same on every run."""

    def __init__(self, name: str) -> None:
        self.rng = random.Random(f"secret-shapes/{name}")

    def __call__(self, alphabet: str, n: int) -> str:
        body = "".join(self.rng.choice(alphabet) for _ in range(n))
        if alphabet in (ALNUM, B64, B64URL) and n >= 8:
            # a real token mixes cases and digits; make sure this one does
            body = "a" + "Z" + "7" + body[3:]
            body = "".join(self.rng.sample(body, len(body)))
        return body


def _dash5(word: str) -> str:
    return "-" * 5 + word + "-" * 5


def _key_block(name: str, kind: str, first: str, lines: int = 6) -> tuple[str, str, list[str]]:
    """A made-up key block: BEGIN line, base64 body lines starting with ``first`` (the DER
    or OpenSSH header that makes it a private key), END line."""
    make = _Maker(name)
    body = first + make(B64, 64 * lines - len(first) - 2) + "=="
    rows = [body[i : i + 64] for i in range(0, len(body), 64)]
    begin = _dash5(f"BEGIN {kind}PRIVATE KEY")
    end = _dash5(f"END {kind}PRIVATE KEY")
    return begin, end, rows


def _shapes() -> list[Shape]:
    out: list[Shape] = []

    def add(name: str, text: str, *secrets: str) -> None:
        out.append(Shape(name, text, secrets))

    def token(name: str, prefix: str, alphabet: str, n: int, template: str = "echo {}") -> None:
        make = _Maker(name)
        secret = prefix + make(alphabet, n)
        add(name, template.format(secret), secret)

    # --- review 2's M7: the shapes that survived, and their families -----------------------
    m = _Maker("discord bot token")
    bot = "M" + m(B64URL, 25) + "." + m(B64URL, 6) + "." + m(B64URL, 38)
    add("Discord bot token", f"client.run('{bot}')", bot)
    m = _Maker("discord bot token N")
    bot = "N" + m(B64URL, 23) + "." + m(B64URL, 6) + "." + m(B64URL, 27)
    add("Discord bot token (N…, short tail)", bot, bot)
    token("Mailgun key- hex", "key-", HEX, 32, "api:{}")
    token(
        "Mailgun key- alnum", "key-", ALNUM, 32, "curl -s --user 'api:{}' https://api.mailgun.net"
    )
    m = _Maker("mailgun new")
    mg = f"{m(HEX, 32)}-{m(HEX, 8)}-{m(HEX, 8)}"
    add("Mailgun private key (32-8-8 hex)", f"MAILGUN={mg}", mg)
    token("Google OAuth refresh 1//0", "1//0", B64URL, 60, '"refresh_token_value": "{}"')
    token("Google OAuth refresh 1//03", "1//03", B64URL, 100)
    token("Google OAuth refresh 1//0 bare", "1//0", B64URL, 95)
    m = _Maker("terraform")
    tf = m(ALNUM, 14) + ".atlasv1." + m(B64URL, 67)
    add("Terraform Cloud .atlasv1.", f'credentials "app.terraform.io" {{ t = "{tf}" }}', tf)
    token("DigitalOcean dop_v1_", "dop_v1_", HEX, 64)
    token("DigitalOcean doo_v1_", "doo_v1_", HEX, 64, "DO={}")
    token("DigitalOcean dor_v1_", "dor_v1_", HEX, 64)
    token("Shopify shpat_", "shpat_", HEX, 32, "X-Shopify-Access: {}")
    token("Shopify shpss_", "shpss_", HEX, 32)
    token("Shopify shpca_", "shpca_", HEX, 32)
    token("Shopify shppa_", "shppa_", HEX, 32)
    m = _Maker("telegram")
    tg = "".join(m("123456789", 1) for _ in range(10)) + ":AA" + m(B64URL, 33)
    add("Telegram bot token", f"BOT={tg}", tg)
    m = _Maker("telegram url")
    tg = "".join(m("123456789", 1) for _ in range(9)) + ":AA" + m(B64URL, 33)
    add("Telegram bot token in a URL", f"https://api.telegram.org/bot{tg}/getMe", tg)
    token("Notion ntn_", "ntn_", ALNUM, 46)
    token("Notion secret_ (legacy)", "secret_", ALNUM, 43, "notion = Client(auth='{}')")
    m = _Maker("okta")
    okta = "00" + m(B64URL, 40)
    add("Okta SSWS header", f"Authorization: SSWS {okta}", okta)
    m = _Maker("okta curl")
    okta = "00" + m(B64URL, 40)
    add("Okta SSWS in curl", f'curl -H "Authorization: SSWS {okta}" https://x.okta.com/api', okta)
    m = _Maker("fcm")
    fcm = "AAAA" + m(B64URL, 7) + ":APA91b" + m(B64URL, 134)
    add("FCM server key", f"key={fcm}", fcm)
    token("Alibaba LTAI", "LTAI5t", ALNUM, 18, "AccessKeyId: {}")
    token("Alibaba LTAI bare", "LTAI", ALNUM, 16)
    m = _Maker("gcp private_key_id")
    kid = m(HEX, 40)
    add("GCP private_key_id", f'  "private_key_id": "{kid}",', kid)

    # --- other services ---------------------------------------------------------------------
    token("GitLab glpat-", "glpat-", B64URL, 20)
    token("GitLab glrt- runner", "glrt-", B64URL, 20, "token = {}")
    token("GitLab runner registration GR1348941", "GR1348941", B64URL, 20)
    token("GitLab deploy gldt-", "gldt-", B64URL, 20)
    token("GitLab feed glft-", "glft-", B64URL, 20)
    token("npm npm_", "npm_", ALNUM, 36, "//registry.npmjs.org/:_authToken={}")
    token("PyPI pypi-", "pypi-AgEIcHlwaS5vcmc", B64URL, 60)
    m = _Maker("postman")
    pm = "PMAK-" + m(HEX, 24) + "-" + m(HEX, 34)
    add("Postman PMAK-", pm, pm)
    m = _Maker("sendgrid")
    sg = "SG." + m(B64URL, 22) + "." + m(B64URL, 43)
    add("SendGrid SG.", sg, sg)
    token("Square sq0atp-", "sq0atp-", B64URL, 22)
    token("Square sq0csp-", "sq0csp-", B64URL, 43)
    token("Square EAAA access token", "EAAA", B64URL, 60, "square: {}")
    token("Heroku HRKU-", "HRKU-AA", B64URL, 58)
    m = _Maker("heroku uuid")
    uuid = f"{m(HEX, 8)}-{m(HEX, 4)}-{m(HEX, 4)}-{m(HEX, 4)}-{m(HEX, 12)}"
    add("Heroku API key (UUID) in HEROKU_API_KEY", f"export HEROKU_API_KEY={uuid}", uuid)
    token("Datadog API key", "", HEX, 32, "DD_API_KEY={}")
    token("Datadog app key", "", HEX, 40, "DD_APP_KEY={}")
    token("New Relic NRAK-", "NRAK-", UPPER, 27)
    token("New Relic NRJS-", "NRJS-", UPPER, 27)
    m = _Maker("grafana")
    gs = "glsa_" + m(ALNUM, 32) + "_" + m(HEX, 8)
    add("Grafana glsa_", gs, gs)
    token("Grafana Cloud glc_", "glc_", B64, 48)
    token("Doppler dp.pt.", "dp.pt.", ALNUM, 43)
    token("Pulumi pul-", "pul-", HEX, 40)
    token("Supabase sbp_", "sbp_", HEX, 40)
    token("Supabase sb_secret_", "sb_secret_", B64URL, 32)
    token("Vercel vcp_", "vcp_", ALNUM, 40)
    token("Vercel token in VERCEL_TOKEN", "", ALNUM, 24, "VERCEL_TOKEN={}")
    token("Cloudflare API token in CF_API_TOKEN", "", B64URL, 40, "export CF_API_TOKEN={}")
    m = _Maker("cloudflare origin")
    cf = "v1.0-" + m(HEX, 24) + "-" + m(HEX, 146)
    add("Cloudflare origin CA key", cf, cf)
    token("Linear lin_api_", "lin_api_", ALNUM, 40)
    m = _Maker("airtable")
    at = "pat" + m(ALNUM, 14) + "." + m(HEX, 64)
    add("Airtable pat", at, at)
    token("Atlassian ATATT3", "ATATT3", B64URL, 180)
    m = _Maker("azure")
    az = m(B64URL, 3) + "8Q~" + m(B64URL, 34)
    add("Azure AD client secret", f"client secret value: {az}", az)
    m = _Maker("azure account key")
    ak = m(B64, 86) + "=="
    add(
        "Azure storage AccountKey",
        f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={ak};EndpointSuffix=x",
        ak,
    )
    token("Databricks dapi", "dapi", HEX, 32)
    token("Vault hvs.", "hvs.", B64URL, 90)
    token("Vault hvb.", "hvb.", B64URL, 120)
    token("age secret key", "AGE-SECRET-KEY-1", UPPER, 58)
    token("GitHub ghp_", "ghp_", ALNUM, 36)
    token("GitHub gho_", "gho_", ALNUM, 36)
    token("GitHub ghs_", "ghs_", ALNUM, 36)
    token("GitHub github_pat_", "github_pat_11", ALNUM + "_", 80)
    token("Slack xoxb-", "xoxb-123456789012-123456789012-", ALNUM, 24)
    token("Slack xoxp-", "xoxp-123456789012-123456789012-", ALNUM, 32)
    token("Slack xapp-", "xapp-1-A0123456789-1234567890123-", HEX, 64)
    token("Anthropic sk-ant-", "sk-ant-api03-", B64URL, 95)
    token("OpenAI sk-proj-", "sk-proj-", B64URL, 120)
    token("OpenRouter sk-or-v1-", "sk-or-v1-", HEX, 64)
    token("Stripe sk_live_", "sk_live_", ALNUM, 99)
    token("Stripe rk_live_", "rk_live_", ALNUM, 99)
    token("Stripe whsec_", "whsec_", ALNUM, 32)
    token("Hugging Face hf_", "hf_", ALNUM, 34)
    token("Google API key AIza", "AIza", B64URL, 35)
    token("Google OAuth ya29.", "ya29.", B64URL, 120)
    token("AWS AKIA", "AKIA", UPPER, 16)
    token("AWS ASIA", "ASIA", UPPER, 16)
    m = _Maker("jwt")
    jwt = (
        base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
        + "."
        + base64.urlsafe_b64encode(b'{"sub":"42","name":"x"}').decode().rstrip("=")
        + "."
        + m(B64URL, 43)
    )
    add("JWT", jwt, jwt)
    token("Docker Hub dckr_pat_", "dckr_pat_", B64URL, 27)
    token("Twilio SK", "SK", HEX, 32)
    token("Sentry sntrys_", "sntrys_eyJ", B64URL, 120)
    m = _Maker("mapbox")
    mb = "sk.eyJ" + m(B64URL, 60) + "." + m(B64URL, 22)
    add("Mapbox sk.eyJ", mb, mb)
    token("SonarQube squ_", "squ_", HEX, 40)
    token("Shippo shippo_live_", "shippo_live_", HEX, 40)
    token("Render rnd_", "rnd_", ALNUM, 32)
    m = _Maker("resend")
    rs = "re_" + m(ALNUM, 8) + "_" + m(ALNUM, 24)
    add("Resend re_", rs, rs)
    token("ReadMe rdme_", "rdme_", LOWER, 70)
    token("xAI xai-", "xai-", ALNUM, 80)
    m = _Maker("brevo")
    bv = "xkeysib-" + m(HEX, 64) + "-" + m(ALNUM, 16)
    add("Brevo xkeysib-", bv, bv)
    token("Bitbucket ATBB", "ATBB", ALNUM, 32)
    token("Artifactory AKCp", "AKCp", ALNUM, 69)
    token("Twitter bearer", "A" * 22, ALNUM, 90)
    token("Netlify nfp_", "nfp_", ALNUM, 36)
    token("Neon napi_", "napi_", LOWER, 64)
    token("Prefect pnu_", "pnu_", ALNUM, 36)
    token("PlanetScale pscale_tkn_", "pscale_tkn_", B64URL, 43)
    token("Pinecone pcsk_", "pcsk_", ALNUM, 64)
    token("Perplexity pplx-", "pplx-", ALNUM, 48)
    m = _Maker("dynatrace")
    dt = "dt0c01." + m(UPPER, 24) + "." + m(UPPER, 64)
    add("Dynatrace dt0c01.", dt, dt)
    m = _Maker("langsmith")
    ls = "lsv2_pt_" + m(HEX, 32) + "_" + m(HEX, 10)
    add("LangSmith lsv2_pt_", ls, ls)
    token("Meta EAA access token", "EAAB", ALNUM, 120)
    m = _Maker("tailscale")
    ts = "tskey-auth-" + m(ALNUM, 12) + "-" + m(ALNUM, 30)
    add("Tailscale tskey-auth-", ts, ts)
    token("Typeform tfp_", "tfp_", B64URL, 44)
    token("Tavily tvly-", "tvly-", ALNUM, 32)
    token("Fly.io fo1_", "fo1_", B64URL, 43)
    m = _Maker("flutterwave")
    fw = "FLWSECK-" + m(HEX, 32) + "-X"
    add("Flutterwave FLWSECK-", fw, fw)
    token("Contentful CFPAT-", "CFPAT-", B64URL, 43)
    m = _Maker("circleci")
    cc = "CCIPAT_" + m(ALNUM, 22) + "_" + m(HEX, 40)
    add("CircleCI CCIPAT_", cc, cc)
    token("Clojars CLOJARS_", "CLOJARS_", LOWER, 60)
    token("NuGet oy2", "oy2", LOWER, 43)
    token("Mailchimp -us", "", HEX, 32, "{}-us14")
    token("Buildkite bkua_", "bkua_", HEX, 40)
    token("Groq gsk_", "gsk_", ALNUM, 52)
    token("Replicate r8_", "r8_", ALNUM, 37)
    token("RubyGems rubygems_", "rubygems_", HEX, 48)

    # --- private keys, whole and scattered --------------------------------------------------
    begin, end, rows = _key_block("split argv", "RSA ", "MIIEogIBAAKCAQEA")
    words = [*begin.split(), *rows, *end.split()]
    add("RSA key split into argv words", "printf '%s\\n' " + " ".join(words), *rows)
    begin, end, rows = _key_block("list items", "", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC")
    add("PKCS#8 key as a Python list of its words", repr([*begin.split(), *rows, *end.split()]),
        *rows)  # fmt: skip
    begin, end, rows = _key_block("json lines", "EC ", "MHcCAQEEI")
    add("EC key as a pretty JSON list, one line each", json.dumps([begin, *rows, end], indent=2),
        *rows)  # fmt: skip
    begin, end, rows = _key_block("one line", "OPENSSH ", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE")
    add("OpenSSH key on one line (echo $KEY)", " ".join([begin, *rows, end]), *rows)
    begin, end, rows = _key_block("markers apart", "RSA ", "MIIEpAIBAAKCAQEA")
    text = f"{begin.replace(' PRIVATE', chr(10) + 'PRIVATE')}\n" + "\n".join(rows) + f"\n{end}"
    add("RSA key with its marker words on separate lines", text, *rows)
    _, _, rows = _key_block("body alone", "OPENSSH ", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE")
    add("OpenSSH key body without markers", rows[0], rows[0])
    _, _, rows = _key_block("pkcs8 body alone", "", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC")
    add("PKCS#8 body without markers", f"key: {rows[0]}", rows[0])
    _, _, rows = _key_block("ed25519 body", "", "MC4CAQAwBQYDK2VwBCIEI")
    add("Ed25519 PKCS#8 body without markers", rows[0][:48], rows[0][:48])

    # --- a secret after a label that says so (the generic rule) ------------------------------
    def labelled(name: str, template: str, alphabet: str = ALNUM, n: int = 32) -> None:
        make = _Maker(name)
        secret = make(alphabet, n)
        add(name, template.format(secret), secret)

    labelled("k=v: app_token=", "app_token={}")
    labelled("k: v: client_secret:", "client_secret: {}")
    labelled('"k": "v": refresh_token', '{{"refresh_token": "{}", "expires_in": 3600}}')
    labelled("--k v: --auth-key", "deploy --auth-key {} --env prod")
    labelled("--k=v: --bearer=", "tool --bearer={} status")
    labelled("Authorization: unknown scheme", "Authorization: Custom {}", B64URL, 40)
    labelled("Proxy-Authorization: Basic", "Proxy-Authorization: Basic {}", B64, 28)
    labelled("X-Auth-Token: header", "X-Auth-Token: {}", HEX, 32)
    add("X-Api-Key: a plain word", 'curl -H "X-Api-Key: hunterhunter2" https://a', "hunterhunter2")
    labelled("JWT_SECRET=", "JWT_SECRET={}")
    labelled("PRIVATE_KEY= (hex)", "PRIVATE_KEY=0x{}", HEX, 64)
    labelled("session_cookie:", "session_cookie: {}")
    labelled("bearer X in a sentence", "use bearer {} for the call", B64URL, 40)
    labelled("--private-key X", "signer --private-key {} tx.json", HEX, 64)
    add("passwd: in YAML", "db:\n  passwd: Quill-Marsh-55\n", "Quill-Marsh-55")
    add("DB_PWD=", "DB_PWD=Tide4Harbor9", "Tide4Harbor9")
    add("MYSQL_PWD= env", "MYSQL_PWD=Fen-Ridge-82 mysql -u app", "Fen-Ridge-82")
    add("userinfo with an empty user", "redis://:Cinder-Vale-14@cache:6379/0", "Cinder-Vale-14")
    add("amqp userinfo", "amqp://svc:Moss-Arrow-27@mq.local:5672/", "Moss-Arrow-27")
    add("jwt: in YAML", f"jwt: {jwt}", jwt)
    labelled("--access-token X", "gh-tool --access-token {} sync")
    labelled("--client-secret X", "oauth-cli --client-secret {} login")
    add("redis-cli -a X", "redis-cli -h cache -a Pebble-Lake-71 ping", "Pebble-Lake-71")
    add("sshpass -p X", "sshpass -p Harbor-Fig-36 ssh pi@10.0.0.9", "Harbor-Fig-36")
    add(
        "curl -u admin:X", "curl -u admin:Lantern-Gulf-52 http://127.0.0.1:8080/", "Lantern-Gulf-52"
    )
    add("Cookie: session=X", "Cookie: session=Qm9vdGgtUm9vbS03Nw; theme=dark", "Qm9vdGgtUm9vbS03Nw")
    add("mysql '-pX' as shlex quotes it", "mysql -u root '-pHunter2-Kelp!' shop", "Hunter2-Kelp!")
    add("mysql -pX", "mysql -u root -pWillow-Dune-18 shop", "Willow-Dune-18")
    add("mysqldump -pX", "mysqldump -u root -pSorrel-Bay-63 shop > shop.sql", "Sorrel-Bay-63")
    return out


SHAPES: list[Shape] = _shapes()

# Look-alikes: none of these is a secret, and every one must come out unchanged.
_SHA = "3f786850e387550fdab836ed7e6dc881de23001b"
_SHA256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
LOOK_ALIKES: list[str] = [
    # commit ids and checksums (a checksum the task asked for stays usable)
    f"commit {_SHA}",
    f"git show {_SHA} --stat",
    "a1b2c3d (HEAD -> main) fix the build",
    f"{_SHA256}  ubuntu-24.04-desktop-amd64.iso",
    "d41d8cd98f00b204e9800998ecf8427e  empty.txt",
    f"{_SHA}  notes.txt",
    "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
    "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e  -",
    f"sha256:{_SHA256}",
    f"docker pull nginx@sha256:{_SHA256}",
    "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8 root@host (ED25519)",
    "integrity sha512-Q2hhbmdlIHRoZSB3b3JsZCBieSBjaGFuZ2luZyB5b3Vyc2VsZg==",
    # UUIDs and ids in paths
    "ls /var/lib/docker/volumes/123e4567-e89b-12d3-a456-426614174000/_data",
    "UUID=0b7c9a1e-3f2d-4c5b-9a8e-7d6c5b4a3f2e / ext4 defaults 0 1",
    "/dev/disk/by-uuid/5c2f1d7e-8a9b-4c3d-b2e1-f0a9b8c7d6e5 -> ../../sda2",
    "X-Request-Id: 7f8e9d0c-1b2a-4c3d-8e9f-0a1b2c3d4e5f",
    "web-7d4b9c6f5d-x2x8q   1/1   Running   0   3h",
    "container 4f9c2b1a7e3d8c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b exited",
    # base64 of ordinary words
    "echo aGVsbG8gd29ybGQ= | base64 -d",
    "dGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw==",
    # version strings
    "openssl 3.0.11 19 Sep 2023",
    "node-v18.19.0-linux-x64.tar.xz",
    "python3-cryptography 41.0.7-4ubuntu0.1",
    "pip install python-jose==3.3.0",
    # key, token, secret and password as words
    "a key-value store keeps each key-value pair in memory",
    "the keyboard layout and the primary key of the table",
    "key rotation is described in docs/keys.md",
    "--key-length 4096 --key-type rsa",
    "ssh-keygen -t ed25519 -C key-signing-key",
    "send it as a bearer token in the Authorization header",
    "max_tokens: 1024",
    "token_type: bearer",
    "PasswordAuthentication no",
    "passwd: password updated successfully",
    "Enter passphrase for key '/root/.ssh/id_rsa':",
    "GIT_CONFIG_KEY_0=core.fsmonitor",
    "kubectl get secret db-credentials -o yaml",
    "access_key     ****************ABCD shared-credentials-file",
    "tokens start with dop_v1_ and shpat_ and ntn_ (see the docs)",
    "secret_santa_assignments_2024_final_list",
    # file names
    "cat token.txt secrets.yaml",
    "ls ~/.ssh: id_ed25519  id_ed25519.pub  known_hosts  authorized_keys",
    "--password-file /run/secrets/db_password",
    "ssh -i ~/.ssh/deploy_key.pem admin@10.0.0.5",
    "vim password_policy.md",
    # references and code
    "Authorization: Bearer $TOKEN",
    'curl -H "X-Api-Key: ${API_KEY}" https://a',
    'api_key = os.environ["API_KEY"]',
    "token = get_token()",
    "password = getpass.getpass()",
    "mysql -u root -p shop",
    "curl -u deploy https://ci.example.com",
    # numbers and addresses shaped like tokens
    "print(1//0)  # ZeroDivisionError",
    "example.com. 300 IN AAAA 2001:db8::1",
    "12:30:45 up 3 days, load average: 0.10",
    "fe80::1ff:fe23:4567:890a dev eth0",
    "ether 00:1a:2b:3c:4d:5e brd ff:ff:ff:ff:ff:ff",
    '"client_id": "104837261948572610384",',
    '"project_id": "acme-prod-42",',
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36",
    "Cookie: theme=dark; lang=en",
    # public keys and certificates
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGJ4c3R1dmZ3eHl6MDEyMzQ1Njc4OWFiY2RlZmdo user@host",
    _dash5("BEGIN CERTIFICATE")
    + "\nMIIC+TCCAeGgAwIBAgIUN7HVbWQvZ3VwcHkgY2VydGlmaWNhdGUgYm9keSBsaW5l\n"
    + _dash5("END CERTIFICATE"),
    _dash5("BEGIN PUBLIC KEY")
    + "\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n"
    + _dash5("END PUBLIC KEY"),
    # URLs without credentials
    "https://example.com/path?page=2&sort=desc",
    "git@github.com:acme/app.git",
    "ssh://git@host:22/srv/repo.git",
]
