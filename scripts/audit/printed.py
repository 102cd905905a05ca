"""What the audit scripts share: how ttap prints a duration, and how they run it.

Both checkers stay independent of ttap's code; this holds only their own common ground:
the units of a printed duration, the value of its last printed digit, and the environment a
`ttap analyze` run gets (the checkout's models/ unless TTAP_MODEL_DIR says otherwise).
"""
import os

UNIT_NS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}


def to_ns(value, unit):
    return float(value) * UNIT_NS[unit]


def rounding(text, unit="ns"):
    """The last printed digit of a figure, in ns."""
    digits = text.split(".")[1] if "." in text else ""
    return 10 ** (-len(digits)) * UNIT_NS.get(unit, 1)


def ttap_env():
    """The environment for a ttap run: the checkout's models/ unless TTAP_MODEL_DIR is set."""
    env = dict(os.environ)
    env.setdefault("TTAP_MODEL_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models"))
    return env
