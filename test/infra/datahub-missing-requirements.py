"""Prints, one a line, the requirements of acryl-datahub's extras that this Python does not satisfy.

    python datahub-missing-requirements.py <extra>[,<extra>...] [--leave-out <name>]... [--pin <requirement>]...

Run with a client virtualenv's own Python (test/infra/provision.sh): it reads the installed package's
metadata, so the requirements are those of the pinned version, never a copy. A requirement with extras
of its own (`sqlglot[rs]`) is satisfied when its package and those extras' requirements are. A package
named by `--leave-out` is left out (a requirement that would replace what the client runs with); a
`--pin` narrows the extras' requirement of its package (or adds one). Prints nothing when the extras are
complete; exits 1 when acryl-datahub itself is not installed.
"""

import argparse
import importlib.metadata as metadata
import re
import sys

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wanted(requirement: Requirement, extra: str) -> bool:
    """Whether a requirement is one of `extra`'s (and not one of the package's base requirements)."""
    marker = requirement.marker
    return marker is not None and marker.evaluate({"extra": extra}) and not marker.evaluate({"extra": ""})


def satisfied(requirement: Requirement, left_out: set[str], seen: set[str]) -> bool:
    try:
        installed = metadata.version(requirement.name)
    except metadata.PackageNotFoundError:
        return False
    if not requirement.specifier.contains(installed, prereleases=True):
        return False
    return not (requirement.extras and missing(requirement.name, sorted(requirement.extras), left_out, {}, seen))


def missing(package: str, extras: list[str], left_out: set[str], pins: dict[str, Requirement], seen: set[str]) -> list[str]:
    """The requirements of `package`'s `extras` not satisfied here, narrowed by the pins (which it uses up)."""
    out = []
    requirements = [Requirement(r) for r in metadata.requires(package) or []]
    for extra in extras:
        for requirement in requirements:
            name = canonical(requirement.name)
            if not wanted(requirement, extra) or name in left_out or str(requirement) in seen:
                continue
            seen.add(str(requirement))
            unmarked = Requirement(str(requirement).split(";")[0])
            pin = pins.pop(name, None)
            if pin is not None:
                unmarked.specifier = SpecifierSet(str(unmarked.specifier & pin.specifier))
                unmarked.extras |= pin.extras
            if not satisfied(unmarked, left_out, seen):
                out.append(str(unmarked))
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("extras")
    parser.add_argument("--leave-out", action="append", default=[])
    parser.add_argument("--pin", action="append", default=[])
    args = parser.parse_args()
    left_out = {canonical(n) for n in args.leave_out}
    pins = {canonical(r.name): r for r in map(Requirement, args.pin)}
    try:
        metadata.version("acryl-datahub")
    except metadata.PackageNotFoundError:
        print("acryl-datahub is not installed", file=sys.stderr)
        return 1
    extras = [e for e in args.extras.split(",") if e]
    out = missing("acryl-datahub", extras, left_out, pins, set())
    # A pin of a package the extras do not require.
    out += [str(pin) for pin in pins.values() if not satisfied(pin, left_out, set())]
    for requirement in out:
        print(requirement)
    return 0


if __name__ == "__main__":
    sys.exit(main())
