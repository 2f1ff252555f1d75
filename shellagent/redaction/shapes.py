"""Secrets recognised by their shape: tokens with a fixed prefix, key blocks, crypt hashes.

The token shapes are one pattern that asks first for the start of a word (a position
inside a word fails at once) and then tries the shapes of the character found there, in
one scan, over only the words long enough to hold a token (``Scan.long_words``). Shapes
without a fixed first character are looked for only where their marker is (``_MARKED``).
PEM and PuTTY private keys, which span lines, are matched over the whole text; ``BEGIN``,
``END`` and ``BODY_LINE`` are shared with ``cuts.py``, which tracks key blocks across an
output cut.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Iterator

from shellagent.redaction.scan import SHAPE, Hit, Scan, rx
from shellagent.redaction.values import entropy, looks_random

_ALNUM = "[A-Za-z0-9]"


def _group(first: str, alternatives: dict[str, str]) -> str:
    """One pattern for every shape starting with ``first``; the group that matched names
    the kind. (Every shape starts a word: ``_ALL_SHAPES`` asks for that once, before all.)"""
    body = "|".join(f"(?P<{kind}>{pattern})" for kind, pattern in alternatives.items())
    return f"{re.escape(first)}(?:{body})"


# Shapes keyed by their first character; each alternative is what follows it.
_B64 = "[A-Za-z0-9+/]"
# after its first letter (M, N or O: the base64 of the bot's id)
_DISCORD_BOT = r"[A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,40}"
_SHAPES: tuple[str, ...] = (
    _group(
        "g",
        {
            "github_token": r"h[pousr]_[A-Za-z0-9]{30,}|ithub_pat_[A-Za-z0-9_]{22,}",
            "gitlab_token": r"l(?:pat|dt|rt|ptt|soat|cbt|imt|oas|ffct|ft|agent|wt|oat)-"
            r"[A-Za-z0-9_\-]{20,}",
            "grafana_token": r"lsa_[A-Za-z0-9]{20,}_[A-Fa-f0-9]{8}|lc_[A-Za-z0-9+/_\-]{32,}={0,2}",
            "groq_key": r"sk_[A-Za-z0-9]{48,}",
        },
    ),
    _group(
        "G",
        {
            "gitlab_token": r"R1348941[A-Za-z0-9_\-]{20,}",
            "google_client_secret": r"OCSPX-[A-Za-z0-9_\-]{24,}",
        },
    ),
    _group(
        "s",
        {
            "anthropic_key": r"k-ant-[A-Za-z0-9_\-]{16,}",
            "openai_key": r"k-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_\-]{20,}",
            "stripe_key": r"k_(?:live|test)_[A-Za-z0-9]{16,}",
            "shopify_token": r"hp(?:at|ss|ca|pa)_[A-Za-z0-9]{32,}",
            "supabase_token": r"bp_(?:oauth_)?[a-f0-9]{40}|b_secret_[A-Za-z0-9_\-]{20,}",
            "notion_token": r"ecret_[A-Za-z0-9]{43}(?![A-Za-z0-9])",
            "sentry_token": r"ntry[su]_[A-Za-z0-9+/=_\-]{40,}",
            "mapbox_token": r"k\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}",
            "square_token": r"q0(?:atp|csp|idp)-[A-Za-z0-9_\-]{22,}",
            "sonarqube_token": r"q[upa]_[a-f0-9]{40}",
            "shippo_token": r"hippo_(?:live|test)_[a-f0-9]{40}",
            "openai_session_key": r"ess-[A-Za-z0-9]{40}(?![A-Za-z0-9])",
            "elevenlabs_key": r"k_[a-f0-9]{48}(?![A-Za-z0-9])",
            "dropbox_token": r"l\.(?:u\.)?[A-Za-z0-9_\-]{60,}",
            "sourcegraph_token": r"gp_[A-Za-z0-9_]{40,}|gph_[A-Za-z0-9_]{20,}",
            "openshift_token": r"ha256~[A-Za-z0-9_\-]{40,}",
        },
    ),
    _group(
        "r",
        {
            "stripe_key": r"k_(?:live|test)_[A-Za-z0-9]{16,}",
            "replicate_token": r"8_[A-Za-z0-9]{37}",
            "rubygems_key": r"ubygems_[a-f0-9]{48}",
            "render_token": r"nd_[A-Za-z0-9]{32,}",
            "resend_key": r"e_[A-Za-z0-9]{8}_[A-Za-z0-9]{24,}",
            "readme_key": r"dme_[a-z0-9]{60,}",
        },
    ),
    _group(
        "h",
        {
            "huggingface_token": r"f_[A-Za-z0-9]{30,}",
            "vault_token": r"v[sbr]\.[A-Za-z0-9_\-]{24,}",
            "slack_webhook": r"ooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]+",
        },
    ),
    _group("H", {"heroku_key": r"RKU-[A-Za-z0-9_\-]{40,}"}),
    _group(
        "x",
        {
            "slack_token": r"ox[abcprs]-[0-9A-Za-z\-]{10,}|oxe(?:\.xox[bp])?-\d-[A-Za-z0-9\-]{16,}"
            r"|app-\d-[A-Za-z0-9\-]{20,}",
            "xai_key": r"ai-[A-Za-z0-9]{48,}",
            "brevo_key": r"(?:keysib|smtpsib)-[a-f0-9]{32,}-[A-Za-z0-9]{12,}",
        },
    ),
    _group(
        "A",
        {
            "aws_access_key_id": r"(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA)[0-9A-Z]{16}(?![0-9A-Za-z])",
            "google_api_key": r"Iza[0-9A-Za-z_\-]{35}",
            "atlassian_token": r"TATT3[A-Za-z0-9_\-=]{50,}|TCTT3[A-Za-z0-9_\-=]{50,}",
            "bitbucket_token": r"TBB[A-Za-z0-9]{28,}",
            "age_key": r"GE-SECRET-KEY-1[0-9A-Z]{58}",
            "fcm_server_key": r"AAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,}",
            "artifactory_token": r"KCp[A-Za-z0-9]{64,}",
            # 21 or 22 A's (the app's id), then letters, digits and %-escapes
            "twitter_bearer_token": r"A{19,}[A-Za-z0-9%]{40,}",
            "tencent_key": r"KID[A-Za-z0-9]{32}(?![A-Za-z0-9])",
            "apify_token": r"pify_api_[A-Za-z0-9]{30,}",
            "yandex_key": r"QVN[A-Za-z0-9_\-]{35,38}(?![A-Za-z0-9_\-])",
            "octopus_key": r"PI-[A-Z0-9]{26,}(?![A-Za-z0-9])",
        },
    ),
    _group(
        "e",
        {
            "jwt": r"yJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
            # a legacy Grafana key is the base64 of {"k":"…","n":…} (or {"k": "…", …})
            "grafana_token": r"yJrIjo[gi][A-Za-z0-9+/]{40,}={0,2}",
        },
    ),
    _group(
        "n",
        {
            "npm_token": r"pm_[A-Za-z0-9]{36}(?![A-Za-z0-9])",
            "nostr_key": r"sec1[02-9ac-hj-np-z]{58}(?![a-z0-9])",
            "notion_token": r"tn_[A-Za-z0-9]{40,}",
            "netlify_token": r"fp_[A-Za-z0-9]{36,}",
            "neon_key": r"api_[a-z0-9]{60,}",
        },
    ),
    _group(
        "N",
        {
            "newrelic_key": r"R(?:AK|JS|II)-[A-Z0-9]{27}",
            "discord_bot_token": _DISCORD_BOT,
        },
    ),
    _group(
        "M",
        {
            "discord_bot_token": _DISCORD_BOT,
            # the base64 DER body of a private key, without its BEGIN line: PKCS#1 and
            # PKCS#8 RSA, encrypted PKCS#8, EC (SEC1, PKCS#8), Ed25519
            "private_key": rf"I[IG]{_B64}{{2,3}}IBA(?:AK|DAN){_B64}{{40,}}"
            rf"|II{_B64}{{3}}BJBgkqhkiG9w0BBQ{_B64}{{40,}}"
            rf"|IG{_B64}AgEAMBMGByqGSM49{_B64}{{40,}}"
            rf"|(?:HcCAQEE|IGkAgEBBDA|IHcAgEBBEI){_B64}{{40,}}"
            rf"|(?:C4CAQAwBQYDK2Vw|FECAQEwBQYDK2Vw){_B64}{{20,}}",
        },
    ),
    _group(
        "O",
        {"discord_bot_token": _DISCORD_BOT},
    ),
    _group(
        "b",
        {
            "private_key": rf"3BlbnNzaC1rZXktdjE{_B64}{{20,}}",
            "buildkite_token": r"kua_[a-f0-9]{40}",
        },
    ),
    _group(
        "p",
        {
            "pypi_token": r"ypi-AgE[A-Za-z0-9_\-]{50,}",
            "pulumi_token": r"ul-[a-f0-9]{32,}",
            "prefect_key": r"nu_[A-Za-z0-9]{36}",
            "harness_token": r"at\.[A-Za-z0-9_\-]{20,}\.[0-9a-f]{24}\.[A-Za-z0-9]{20}",
            "hubspot_token": r"at-(?:na|eu|ap)\d-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}"
            r"-[0-9a-f]{12}",
            "clickup_token": r"k_\d{6,10}_[A-Z0-9]{32}(?![A-Za-z0-9])",
            "planetscale_token": r"scale_(?:tkn|pw|oauth)_[A-Za-z0-9_.\-]{32,}",
            "pinecone_key": r"csk_[A-Za-z0-9_]{40,}",
            "airtable_token": r"at[A-Za-z0-9]{14}\.[a-f0-9]{64}",
            "perplexity_key": r"plx-[A-Za-z0-9]{40,}",
        },
    ),
    _group("P", {"postman_key": r"MAK-[A-Za-z0-9]{20,}-[A-Za-z0-9]{24,}"}),
    _group(
        "d",
        {
            "docker_token": r"ckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}",
            "digitalocean_token": r"o[por]_v1_[A-Za-z0-9]{40,}",
            "defined_networking_key": r"nkey-[a-z0-9=_\-]{26}-[a-z0-9=_\-]{40,}",
            "databricks_token": r"api[a-h0-9]{32}(?:-\d)?(?![A-Za-z0-9])",
            # dp.st.ENV.…: a service token names its environment
            "doppler_token": r"p\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_\-]{1,40}\.)?"
            r"[A-Za-z0-9]{40,}",
            "duffel_token": r"uffel_(?:live|test)_[A-Za-z0-9_\-]{40,}",
            "discord_webhook": r"iscord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{20,}",
            "dynatrace_token": r"t0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}",
        },
    ),
    _group(
        "S",
        {
            "sendgrid_key": r"G\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{32,64}",
            "twilio_key": r"K[0-9a-fA-F]{32}(?![0-9A-Za-z])",
        },
    ),
    _group("y", {"google_oauth_token": r"a29\.[0-9A-Za-z_\-]{20,}"}),
    _group(
        "1",
        {
            "google_refresh_token": r"//[0-9][0-9A-Za-z_\-]{30,}",
            "asana_token": r"/\d{10,20}:[A-Za-z0-9]{32}(?![A-Za-z0-9])",
        },
    ),
    _group("2", {"asana_token": r"/\d{10,20}/\d{10,20}:[A-Za-z0-9]{32}(?![A-Za-z0-9])"}),
    _group("w", {"stripe_key": r"hsec_[A-Za-z0-9]{24,}"}),
    _group(
        "l",
        {
            "linear_key": r"in_(?:api|oauth)_[A-Za-z0-9]{40}",
            "langsmith_key": r"sv2_[a-z]{2}_[A-Za-z0-9]{20,}_[A-Za-z0-9]{6,}",
        },
    ),
    _group("k", {"mailgun_key": r"ey-[0-9A-Za-z]{32}(?![0-9A-Za-z])"}),
    _group(
        "L",
        {
            "private_key": r"S0tLS1CRUdJTi[A-Za-z0-9+/]{16,}={0,2}",
            "alibaba_key": r"TAI[A-Za-z0-9]{12,30}(?![A-Za-z0-9])",
        },
    ),
    _group(
        "t",
        {
            "tailscale_key": r"skey-(?:auth|api|client|scim|webhook)-"
            r"[A-Za-z0-9]{8,}-[A-Za-z0-9]{16,}",
            "typeform_token": r"fp_[A-Za-z0-9_\-]{40,}",
            "tavily_key": r"vly-[A-Za-z0-9_\-]{28,}",
            "scalingo_token": r"k-(?:us|eu)-[A-Za-z0-9_\-]{40,}",
            "rancher_token": r"oken-[a-z0-9]{5}:[a-z0-9]{50,}",
        },
    ),
    _group(
        "f",
        {
            "flyio_token": r"o1_[A-Za-z0-9_\-]{40,}|m[12][ar]?_[A-Za-z0-9+/=_\-]{40,}",
            "figma_token": r"ig[dou]_[A-Za-z0-9_\-]{30,}",
            "frameio_token": r"io-u-[A-Za-z0-9_\-]{40,}",
            "firecrawl_key": r"c-[a-f0-9]{32}(?![A-Za-z0-9])",
            "fireworks_key": r"w_[A-Za-z0-9]{24,}(?![A-Za-z0-9])",
        },
    ),
    _group(
        "C",
        {
            "contentful_token": r"FPAT-[A-Za-z0-9_\-]{43}",
            "circleci_token": r"CIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}",
            "clojars_token": r"LOJARS_[a-z0-9]{60}",
        },
    ),
    _group(
        "o",
        {
            "nuget_key": r"y2[a-z0-9]{43}(?![a-z0-9])",
            "onepassword_token": r"ps_eyJ[A-Za-z0-9+/=_\-]{60,}",
            "twitch_token": r"auth:[a-z0-9]{30}(?![A-Za-z0-9])",
        },
    ),
    _group(
        "c",
        {
            "crates_token": r"io[A-Za-z0-9]{32}(?![A-Za-z0-9])",
            "cerebras_key": r"sk-[a-z0-9]{40,}",
            # JFrog reference tokens: base64 of "reftkn:01:…"
            "artifactory_token": r"mVmdGtuOjAxOj[A-Za-z0-9]{40,}",
        },
    ),
    _group(
        "e",
        {"e2b_key": r"2b_[a-f0-9]{40}(?![A-Za-z0-9])", "anyscale_key": r"secret_[A-Za-z0-9_]{20,}"},
    ),
    _group("b", {"browserbase_key": r"b_live_[A-Za-z0-9_\-]{20,}"}),
    _group(
        "a",
        {
            "braintree_token": r"ccess_token\$(?:production|sandbox)\$[a-z0-9]{8,}\$[a-f0-9]{16,}",
            "akamai_token": r"kab-[a-z0-9]{16}-[a-z0-9]{16}",
            "adafruit_key": r"io_[A-Za-z0-9]{28}(?![A-Za-z0-9])",
            "huggingface_token": r"pi_org_[A-Za-z0-9]{30,}",
        },
    ),
    _group(
        "E",
        {
            "meta_token": r"AA[A-Za-z0-9]{60,}",
            "easypost_key": r"Z[AT]K[A-Za-z0-9]{54}",
            "tor_key": r"D25519-V3:[A-Za-z0-9+/]{86}={0,2}",  # an onion service's key
        },
    ),
    _group("K", {"telnyx_key": r"EY[0-9A-F]{32}_[A-Za-z0-9]{20,}"}),
    _group(
        "I",
        {
            # AWS session tokens: base64 of their binary header
            "aws_session_token": r"QoJb3JpZ2luX2Vj[A-Za-z0-9+/]{100,}={0,2}",
            "instagram_token": r"GQV[A-Za-z0-9_\-]{100,}",
        },
    ),
    _group(
        "F",
        {
            "aws_session_token": r"woGZXIvYXdzE[A-Za-z0-9+/]{100,}={0,2}",
            "flutterwave_key": r"LWSECK(?:_TEST)?-[a-f0-9]{32}-X",
        },
    ),
    _group("j", {"jina_key": r"ina_[A-Za-z0-9]{40,}"}),
    _group(
        "i",
        {"infracost_key": r"co-[A-Za-z0-9]{32}(?![A-Za-z0-9])"},
    ),
    _group("0", {"salesforce_token": r"0D[A-Za-z0-9]{12,15}![A-Za-z0-9._]{80,}"}),
    _group(
        "R",
        {
            # minisign (Ed + scrypt or no KDF + BLAKE2) and signify (Ed + bcrypt) secret keys
            "private_key": r"W(?:RTY0Iy|QAAEIy)[A-Za-z0-9+/]{100,}={0,2}"
            r"|WRCSw[A-Za-z0-9+/]{100,}={0,2}",
        },
    ),
    _group(
        "v",
        {
            "vercel_token": r"c[pikra]_[A-Za-z0-9]{24,}",
            "cloudflare_origin_key": r"1\.0-[a-f0-9]{16,}-[a-f0-9]{100,}",
        },
    ),
    _group(
        "$",
        {"password_hash": r"(?:1|2[abxy]?|5|6|7|apr1|md5|sha1|y|gy|sm3)\$[./A-Za-z0-9=$,]{20,}"},
    ),
)
# Shapes with loose bodies that ordinary names could fill: the body must look random.
_LOOSE = frozenset(
    {
        "openai_key", "anthropic_key", "gitlab_token", "slack_token", "docker_token",
        "notion_token", "mailgun_key", "alibaba_key", "meta_token", "discord_bot_token",
        "render_token", "vercel_token", "heroku_key", "bitbucket_token", "xai_key",
        "google_refresh_token", "netlify_token", "planetscale_token", "tavily_key",
        "flyio_token", "typeform_token", "digitalocean_token", "shopify_token",
        "perplexity_key", "pinecone_key", "twitter_bearer_token", "sentry_token",
        "dropbox_token", "sourcegraph_token", "openshift_token", "figma_token", "crates_token",
        "tencent_key", "yandex_key", "octopus_key", "frameio_token", "duffel_token",
        "google_client_secret", "postman_key", "onepassword_token", "twitch_token",
        "apify_token", "openai_session_key", "jina_key", "infracost_key", "cerebras_key",
        "anyscale_key", "browserbase_key", "fireworks_key", "scalingo_token", "instagram_token",
    }
)  # fmt: skip


_NAMED_GROUP = re.compile(r"\(\?P<(\w+)>")


def _one_pattern(patterns: tuple[str, ...]) -> str:
    """Every shape in one pattern, at the start of a word (one scan of the text, where a
    position inside a word fails at once); a kind in several alternatives gets its group
    named ``kind__N``."""
    seen: dict[str, int] = {}

    def rename(m: re.Match[str]) -> str:
        seen[m.group(1)] = seen.get(m.group(1), 0) + 1
        return f"(?P<{m.group(1)}__{seen[m.group(1)]}>"

    # one branch per first character (the shapes of one character are tried together)
    by_first: dict[str, list[str]] = {}
    for p in patterns:
        first = p[:2] if p.startswith("\\") else p[:1]
        by_first.setdefault(first, []).append(p[len(first) + 3 : -1])  # first(?:…)
    body = "|".join(
        first + "(?:" + "|".join(_NAMED_GROUP.sub(rename, a) for a in alternatives) + ")"
        for first, alternatives in by_first.items()
    )
    return f"(?<!{_ALNUM})(?:{body})"


_ALL_SHAPES = _one_pattern(_SHAPES)
_TELEGRAM = re.compile(r":AA[A-Za-z0-9_\-]{30,40}(?![A-Za-z0-9_\-])")
# Shapes without a fixed first character, looked for only when their marker is in the text.
_AZURE_CHAR = r"[A-Za-z0-9_~.\-]"
_MARKED: tuple[tuple[str, str, str], ...] = (
    (
        ".atlasv1.",
        "terraform_token",
        r"(?<![A-Za-z0-9])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{50,}",
    ),
    (
        "Q~",
        "azure_client_secret",
        rf"(?<!{_AZURE_CHAR}){_AZURE_CHAR}{{3}}\dQ~{_AZURE_CHAR}{{31,34}}(?!{_AZURE_CHAR})",
    ),
    ("-us", "mailchimp_key", r"(?<![0-9a-f])[0-9a-f]{32}-us\d{1,2}(?![0-9A-Za-z])"),
    # Mailgun's newer private keys: 32, 8 and 8 hex digits
    ("-", "mailgun_key", r"(?<![0-9A-Za-z-])[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}(?![0-9A-Za-z-])"),
    # Azure DevOps' 84-character tokens carry AZDO at character 76
    (
        "AZDO",
        "azure_devops_token",
        r"(?<![A-Za-z0-9])[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}(?![A-Za-z0-9])",
    ),
    # incoming webhooks whose URL is the credential
    (
        ".office.com/webhook",
        "teams_webhook",
        r"\.office\.com/webhook(?:b2)?/[A-Za-z0-9@/_\-]{40,}",
    ),
    ("hooks.zapier.com", "zapier_webhook", r"hooks\.zapier\.com/hooks/catch/\d+/[A-Za-z0-9]+"),
)
# Okta's ``SSWS <token>`` scheme, wherever it appears (the scheme word is short).
_SSWS = re.compile(r"(?<![A-Za-z0-9])SSWS[ \t]+(?P<value>[A-Za-z0-9_\-]{30,})")

BEGIN = r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
END = r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
# A line inside a key block: base64, an armour header, or blank.
BODY_LINE = (
    r"[ \t]*(?:[A-Za-z0-9+/=]+|(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset):[^\n]*)?"
    r"[ \t]*\r?"
)
_PEM = (
    BEGIN
    + r"(?:[^\n]*?"  # on one line, e.g. with escaped newlines in JSON
    + END
    + r"|\n(?:"
    + BODY_LINE
    + r"\n)*?[ \t]*"
    + END
    + r"|[^\n]*(?:\n"  # cut off: the rest of the line and every body line after it
    + BODY_LINE
    + r"(?=\n|\Z))*)"
)
# PuTTY's .ppk: the public lines stay, the private lines and their MAC go.
PUTTY_START, PUTTY_END = "Private-Lines:", "Private-MAC:"
_PUTTY = (
    r"Private-Lines:[ \t]*\d+[ \t]*\r?(?:\n[ \t]*[A-Za-z0-9+/=]+[ \t]*\r?(?=\n|\Z))*"
    r"(?:\nPrivate-MAC:[^\n]*)?"
)
_BARE_AWS = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]+")


def shape_hits(scan: Scan) -> Iterator[Hit]:
    text = scan.text
    joined, _ = scan.long_words
    if joined:
        for m in rx(_ALL_SHAPES).finditer(joined):
            kind = (m.lastgroup or "secret").partition("__")[0]
            if kind in _LOOSE and not looks_random(m.group()[3:]):
                continue
            if m.group().startswith("LS0t") and not _is_private_pem(m.group()):
                continue
            start = scan.from_long_words(m.start())
            end = start + m.end() - m.start()
            yield Hit(start, end, kind, SHAPE, start, end)
        if ":AA" in joined:
            yield from _telegram_tokens(text)
        for marker, kind, pattern in _MARKED:
            if marker in joined:
                for m in rx(pattern).finditer(joined):
                    if kind == "azure_client_secret" and not looks_random(m.group()):
                        continue
                    start = scan.from_long_words(m.start())
                    end = start + m.end() - m.start()
                    yield Hit(start, end, kind, SHAPE, start, end)
        yield from _bare_aws_secrets(scan)
        yield from _base58_keys(scan)
    if "untrusted comment:" in text:
        yield from _minisign_keys(text)
    if "SSWS" in text:
        for m in _SSWS.finditer(text):
            yield Hit(m.start("value"), m.end(), "okta_token", SHAPE, m.start(), m.end())
    if "PRIVATE KEY" in text:
        for m in rx(_PEM).finditer(text):
            yield Hit(m.start(), m.end(), "private_key", SHAPE, m.start(), m.end())
    if "-----BEGIN" in text and "PRIVATE" in text:
        yield from _scattered_pem(text)
    if PUTTY_START in text:
        for m in rx(_PUTTY).finditer(text):
            yield Hit(m.start(), m.end(), "private_key", SHAPE, m.start(), m.end())


# A key block whose markers and body are separate words, list items or arguments
# (``['-----BEGIN', 'RSA', 'PRIVATE', 'KEY-----', 'MIIE…', …]``, ``printf '%s\\n' -----BEGIN …``):
# from its BEGIN marker to its END marker, whatever lies between; without an END, the
# BEGIN marker and every base64 word of 8+ characters after it.
_MARK_WORDS = r"[^\-]{0,48}?PRIVATE[^\-]{0,16}?KEY(?:[^\-]{0,8}BLOCK)?-----"
_SCATTERED_PEM = re.compile(
    r"-----BEGIN"
    + _MARK_WORDS
    + r"(?:[\s\S]{0,20000}?-----END"
    + _MARK_WORDS
    + r"|(?:[\s'\",\\\[\]]{1,6}[A-Za-z0-9+/=]{8,})*)"
)


def _scattered_pem(text: str) -> Iterator[Hit]:
    for m in _SCATTERED_PEM.finditer(text):
        yield Hit(m.start(), m.end(), "private_key", SHAPE, m.start(), m.end())


# Bitcoin private keys in Base58Check: WIF (5…, K…, L…; testnet 9…, c…) and BIP32 extended
# private keys (xprv, tprv, yprv, zprv …). Their checksum tells them from addresses and ids.
_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_BASE58_KEY = re.compile(
    rf"(?<![{_BASE58}])(?:[5KL9c][{_BASE58}]{{50,51}}|[xtyzuv]prv[{_BASE58}]{{100,108}})"
    rf"(?![{_BASE58}])"
)
# version byte (WIF) or 4 version bytes (BIP32) of a private key
_WIF_VERSIONS = (0x80, 0xEF)
_XPRV_VERSIONS = frozenset(
    bytes.fromhex(v)
    for v in ("0488ade4", "04358394", "049d7878", "04b2430c", "044a4e28", "045f18bc")
)


def _base58_keys(scan: Scan) -> Iterator[Hit]:
    for word, word_start in zip(*scan.long_word_list, strict=True):
        if len(word) < 51:
            continue
        for m in _BASE58_KEY.finditer(word):
            if _is_private_base58(m.group()):
                start = word_start + m.start()
                end = word_start + m.end()
                yield Hit(start, end, "private_key", SHAPE, start, end)


def _is_private_base58(value: str) -> bool:
    n = 0
    for c in value:
        n = n * 58 + _BASE58.index(c)
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    payload, check = raw[:-4], raw[-4:]
    if len(payload) < 33 or hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] != check:
        return False
    if len(payload) in (33, 34):  # WIF: version, 32-byte key, 0x01 when compressed
        return payload[0] in _WIF_VERSIONS and (len(payload) == 33 or payload[-1] == 1)
    return len(payload) == 78 and payload[:4] in _XPRV_VERSIONS


# minisign's and signify's key files: a comment line, then the key in base64 on the next.
_SIGNER_KEY = re.compile(
    r"untrusted comment:[^\n]*secret key[^\n]*\r?\n[ \t]*(?P<key>[A-Za-z0-9+/]{40,}={0,2})"
)


def _minisign_keys(text: str) -> Iterator[Hit]:
    for m in _SIGNER_KEY.finditer(text):
        yield Hit(m.start("key"), m.end("key"), "private_key", SHAPE, m.start(), m.end())


def _telegram_tokens(text: str) -> Iterator[Hit]:
    """``123456789:AA…``: a bot id of 6-12 digits, a colon, and some 35 characters."""
    for m in _TELEGRAM.finditer(text):
        start = m.start()
        while start > 0 and text[start - 1].isdigit():
            start -= 1
        if not 6 <= m.start() - start <= 12:
            continue
        if start == 0 or not text[start - 1].isalnum() or text[start - 3 : start] == "bot":
            yield Hit(start, m.end(), "telegram_token", SHAPE, start, m.end())


def _is_private_pem(encoded: str) -> bool:
    """``LS0tLS1CRUdJTi…`` is ``-----BEGIN…`` in base64: a key only if it says PRIVATE KEY."""
    head = encoded[: len(encoded) // 4 * 4][:96]
    try:
        return b"PRIVATE KEY" in base64.b64decode(head)
    except (binascii.Error, ValueError):
        return False


def _bare_aws_secrets(scan: Scan) -> Iterator[Hit]:
    """40 random characters of base64 on their own: what an AWS secret key looks like.

    Kept when they mix cases and digits with a high entropy, are not hex (a commit id), not a
    path, and are not the last line of a base64 blob (whose lines are longer)."""
    text = scan.text
    for word, word_start in zip(*scan.long_word_list, strict=True):
        if len(word) < 40 or (len(word) > 40 and _BASE64_RUN.fullmatch(word)):
            continue  # one base64 run longer than 40 is a blob, not a key
        for m in _BARE_AWS.finditer(word):
            value = m.group()
            if value.startswith("/") or value.endswith("/") or "//" in value:
                continue
            if not (any(c.isupper() for c in value) and any(c.islower() for c in value)):
                continue
            if not any(c.isdigit() for c in value) or entropy(value) < 4.3:
                continue
            start = word_start + m.start()
            line_start = text.rfind("\n", 0, start) + 1
            if line_start:
                previous = text[text.rfind("\n", 0, line_start - 1) + 1 : line_start - 1]
                if _BASE64_RUN.fullmatch(previous.strip()) and len(previous.strip()) > 40:
                    continue
            yield Hit(start, start + 40, "aws_secret_access_key", SHAPE, start, start + 40)
