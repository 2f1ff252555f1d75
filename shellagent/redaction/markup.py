"""Secrets in markup: XML elements and attributes whose name says secret, the private members
of a JSON Web Key, and the credentials OpenVPN keeps inline in a profile.

- ``<password>VALUE</password>``, ``<apikey>…</apikey>``, ``<Pass encoding="base64">…</Pass>``
  (Maven's settings.xml, Syncthing's config.xml, FileZilla's sitemanager.xml);
- ``name="password" value="VALUE"``, ``key="ApiSecret" value="VALUE"`` (JetBrains'
  security.xml, .NET's appSettings, Spring and Ant properties), ``<entry key="NAME">VALUE``;
- a JWK's ``d``, ``p``, ``q``, ``dp``, ``dq``, ``qi`` (RSA, EC, OKP) and ``k`` (a symmetric
  key), where the object says ``"kty"``;
- ``<auth-user-pass>`` (user, then password) and the static keys of ``<secret>``,
  ``<tls-auth>`` and ``<tls-crypt>`` in an ``.ovpn`` profile.

A name is judged as everywhere (``values.classify_name``); a password may be any word, a key
or token must look random.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from shellagent.redaction.scan import CONTEXT, SHAPE, Hit, Scan
from shellagent.redaction.values import classify_name, is_password, looks_random

_ELEMENT = re.compile(
    r"<(?P<name>[A-Za-z_][\w.:-]{0,60})(?:[ \t][^<>\n]{0,200})?>"
    r"(?P<value>[^<>\n]{1,1024})</(?P=name)>"
)
# (found from its value: ``value="`` is rarer than ``name=``)
_VALUE_ATTRIBUTE = re.compile(
    r"""(?:value|content)[ \t]*=[ \t]*(?P<q2>["'])(?P<value>[^"'\n]{1,1024})(?P=q2)"""
)
_NAME_ATTRIBUTE = re.compile(
    r"""(?<![\w-])(?:name|key|id|option)[ \t]*=[ \t]*(?P<q>["'])(?P<name>[^"'\n]{1,80})(?P=q)"""
    r"""[ \t]+\Z"""
)
_ENTRY = re.compile(
    r"""<(?:entry|property|add|setting)[ \t]+(?:key|name)[ \t]*=[ \t]*["'](?P<name>[^"'\n]{1,80})"""
    r"""["'][^<>\n]{0,200}>(?P<value>[^<>\n]{1,1024})<"""
)
_JWK_MEMBER = re.compile(
    r'"(?P<name>d|p|q|dp|dq|qi|k)"[ \t]*:[ \t]*"(?P<value>[A-Za-z0-9_\-]{8,})"'
)
_AUTH_USER_PASS = re.compile(
    r"<auth-user-pass>[ \t]*\r?\n[^\n]*\n[ \t]*(?P<value>[^\s<][^\n<]*?)[ \t]*\r?\n"
    r"[ \t]*</auth-user-pass>"
)
_STATIC_KEY = re.compile(
    r"-----BEGIN OpenVPN Static key V\d-----(?P<body>[\s0-9a-fA-F]+?)"
    r"(?:-----END OpenVPN Static key V\d-----|\Z)"
)


def markup_hits(scan: Scan) -> Iterator[Hit]:
    text = scan.text
    if scan.keywords:
        if "</" in text:
            for m in _ELEMENT.finditer(text):
                yield from _named(m, m.group("name"))
        if "value" in text or "content" in text:
            for m in _VALUE_ATTRIBUTE.finditer(text):
                before = _NAME_ATTRIBUTE.search(text, max(0, m.start() - 120), m.start())
                if before is not None:
                    yield from _named(m, before.group("name"), quoted=True, context=before.start())
        if "<entry" in text or "<property" in text or "<add" in text or "<setting" in text:
            for m in _ENTRY.finditer(text):
                yield from _named(m, m.group("name"))
    if '"kty"' in text:
        for m in _JWK_MEMBER.finditer(text):
            # "kty" makes it a key: a cut must keep it with the member
            kty = text.rfind('"kty"', 0, m.start())
            kty = kty if kty >= 0 else text.find('"kty"', m.end())
            start, end = m.span("value")
            yield Hit(start, end, "private_key", SHAPE, min(kty, m.start()), max(kty + 5, end))
    if "<auth-user-pass>" in text:
        for m in _AUTH_USER_PASS.finditer(text):
            if is_password(m.group("value"), bare=False):
                start, end = m.span("value")
                yield Hit(start, end, "password", CONTEXT, m.start(), m.end())
    if "OpenVPN Static key" in text:
        for m in _STATIC_KEY.finditer(text):
            start, end = m.span("body")
            yield Hit(start, end, "private_key", SHAPE, m.start(), m.end())


def _named(
    m: re.Match[str], name: str, *, quoted: bool = False, context: int | None = None
) -> Iterator[Hit]:
    """The value of ``m`` when ``name`` (an element's or an entry's) names a secret;
    ``context``: where the name starts, when it is not in ``m``."""
    kind = classify_name(name.rpartition(":")[2])
    if kind is None:
        return
    value = m.group("value")
    stripped = value.strip()
    ok = is_password(stripped, bare=not quoted) if kind == "password" else looks_random(stripped)
    if ok:
        start = m.start("value") + len(value) - len(value.lstrip())
        outer = m.start() if context is None else context
        yield Hit(start, start + len(stripped), kind, CONTEXT, outer, m.end())
