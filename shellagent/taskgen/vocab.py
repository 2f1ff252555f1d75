"""Word pools the families draw from: services, people, file stems, places.

Names are chosen so that no pool entry is a substring of another in the same pool, which
lets checks match a drawn name as a fixed string.
"""

from __future__ import annotations


def _pool(text: str) -> tuple[str, ...]:
    return tuple(text.split())


SERVICES = _pool(
    """
    harbor kestrel tallybook quillpad orchard beacon pebble nimbus copperline juniper
    falconer mosaic lantern tundra saffron meridian willowmq cobalt asterix fjord hazelnut
    pioneer summit ripple sparrow cinder glacier marlin osprey basalt heron lichen magpie
    nettle puffin quokka sorrel thistle umber vervain wombat yarrow zephyr alder bramble
    caraway dunlin egret foxglove gannet
    """
)

PEOPLE = (
    ("alice", "Alice Moreau"),
    ("bruno", "Bruno Costa"),
    ("chen", "Chen Wei"),
    ("dana", "Dana Kowalski"),
    ("emil", "Emil Lindqvist"),
    ("farah", "Farah Haddad"),
    ("gita", "Gita Raman"),
    ("hugo", "Hugo Brandt"),
    ("ines", "Ines Duarte"),
    ("jonas", "Jonas Weber"),
    ("kofi", "Kofi Mensah"),
    ("lena", "Lena Novak"),
    ("mateo", "Mateo Rossi"),
    ("nora", "Nora Berg"),
    ("omar", "Omar Sayed"),
    ("priya", "Priya Nair"),
    ("quinn", "Quinn Harper"),
    ("rosa", "Rosa Jimenez"),
    ("sven", "Sven Olsen"),
    ("tara", "Tara Walsh"),
    ("umaima", "Umaima Qureshi"),
    ("viktor", "Viktor Petrov"),
    ("wren", "Wren Ashby"),
    ("yusuf", "Yusuf Demir"),
    ("zoe", "Zoe Fontaine"),
    ("aiko", "Aiko Tanaka"),
    ("bilal", "Bilal Khan"),
    ("clara", "Clara Jensen"),
    ("diego", "Diego Alvarez"),
    ("elif", "Elif Yilmaz"),
)

DOC_STEMS = _pool(
    """
    invoice contract minutes summary budget letter resume manual thesis slides agenda
    receipt statement proposal timesheet itinerary payslip warranty lease quote brochure
    checklist handbook roadmap memo schedule transcript certificate ticket bulletin
    """
)

PHOTO_STEMS = _pool(
    """
    beach birthday portrait sunset garden wedding skyline harbour mountain picnic concert
    graduation forest snowday market lighthouse vineyard carnival canyon riverside
    """
)

CODE_STEMS = _pool(
    """
    main utils server parser config helpers models views routes cli worker scheduler
    exporter importer cache auth billing mailer storage metrics
    """
)

WORDS = _pool(
    """
    apple birch candle dune ember fern grove harvest island jasmine kettle ledger meadow
    nectar oak prism quartz raven spruce timber velvet walnut yonder zinnia amber bronze
    crimson delta echo flint
    """
)

CITIES = _pool(
    """
    Lisbon Oslo Porto Krakow Dublin Tallinn Ghent Bergen Malmo Turin Lyon Leipzig Utrecht
    Graz Brno Cork Aarhus Seville
    """
)

PRODUCTS = _pool(
    """
    notebook stapler monitor keyboard headset webcam lamp backpack charger speaker router
    tablet printer scanner mouse dock
    """
)

LOG_EVENTS = {
    "INFO": (
        "request served",
        "cache warmed",
        "job queued",
        "session opened",
        "config loaded",
        "user signed in",
        "report generated",
        "sync finished",
        "upload accepted",
        "heartbeat ok",
    ),
    "WARN": (
        "slow response",
        "retrying upstream",
        "disk usage high",
        "deprecated option used",
        "queue backlog growing",
        "certificate expires soon",
        "rate limit near",
        "stale lock removed",
    ),
    "ERROR": (
        "database timeout",
        "upstream refused connection",
        "write failed: no space left",
        "payment gateway unreachable",
        "invalid token signature",
        "worker crashed",
        "template missing",
        "checksum mismatch",
    ),
    "DEBUG": ("cache hit", "cache miss", "parsed headers", "opened socket", "closed socket"),
}

URL_PATHS = _pool(
    """
    / /login /cart /api/items /api/orders /search /static/app.js /static/style.css /account
    /checkout /help /api/users /feed.xml /favicon.ico /images/logo.png
    """
)

HOME_DIRS = (
    ("~/Downloads", "my Downloads folder"),
    ("~/Documents", "my Documents folder"),
    ("~/Desktop", "the Desktop"),
    ("~/Pictures", "my Pictures folder"),
    ("~/Music", "my Music folder"),
    ("~/Videos", "my Videos folder"),
)
