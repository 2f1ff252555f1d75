"""Where secrets are in text, and how to cut output without cutting one in two.

Used by the transcript writer and the daemon's log (``transcript/redact.py``'s ``Redactor``),
and by the two places output is cut before it is written (the sandbox's head and tail, the
loop's observation budget). Standard library only, so the sandbox can use it.

- ``spans``: ``find`` runs every rule over a text and merges the hits; ``redact_words``
  redacts a list of strings (an argv) as one line and word by word;
- ``shapes``: tokens with a fixed prefix (``ghp_``, ``AKIA``, ``pypi-AgE`` …), PEM, PuTTY,
  minisign and Bitcoin private keys, crypt hashes, a bare 40-character AWS secret key;
- ``context``: ``NAME=VALUE`` and ``--name VALUE`` where the name says secret, HTTP
  ``Authorization`` (any scheme, its parameters too) and ``Cookie`` headers, cookie jars,
  credentials in URLs, ``.netrc``, ``.pgpass``;
- ``markup``: XML elements and attributes named like secrets, JWK private members, OpenVPN's
  inline credentials;
- ``programs``: passwords and tokens on the command lines of the programs that take them,
  Oracle's ``user/password@db``;
- ``wrapped``: base64 runs that decode to text holding a secret;
- ``nearby``: a random token next to a word that names a secret (``your API token is …``);
- ``values``: what makes a value a secret, a name a secret's name, a value an example;
- ``cuts``: cutting output so that what is kept can still be redacted on its own.
"""

from __future__ import annotations

from shellagent.redaction.cuts import BlockTracker, Cut, cut_text, guard
from shellagent.redaction.scan import Hit
from shellagent.redaction.spans import Known, find, redact_words

__all__ = ["BlockTracker", "Cut", "Hit", "Known", "cut_text", "find", "guard", "redact_words"]
