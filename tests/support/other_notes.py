"""Notes of other kinds than software, written for this project in our own words: lighthouses and
the planets. The real-model journeys and `make bench-models` research them beside the Rust notes
(tests/support/corpus.py), so that what holds for one subject is seen to hold for others: a small
model's failures on a question about lenses or orbits are not hidden by prompts tuned on code.

One subject per file, as in the Rust notes: each plan step needs pages of its own.
"""

from __future__ import annotations

from pathlib import Path

LIGHTHOUSES: dict[str, str] = {
    "fresnel-lens.md": """\
# The Fresnel lens

Augustin-Jean Fresnel, a French engineer, presented his lens for lighthouses in 1822. Instead of
one thick curved glass, which would have been too heavy and would have absorbed much of the light,
he built the lens from many thin rings of glass prisms arranged around a central bulls-eye. Each
ring bends the light of the lamp so that it leaves in one horizontal beam.

The first Fresnel lens was lit in the Cordouan lighthouse at the mouth of the Gironde in 1823. Its
beam could be seen more than twenty nautical miles away, several times farther than the lights of
the mirrors it replaced.

## Why it reaches farther

A mirror reflector of the eighteenth century sent out only a small part of the lamp's light; the
rest was lost in the metal and escaped above and below the beam. The rings of prisms of a Fresnel
lens catch most of the light the lamp gives in every direction and send it toward the horizon, so
the same lamp makes a much brighter beam, and a brighter beam is seen from farther away.
""",
    "reflectors.md": """\
# Lights before the lens

Before the Fresnel lens, lighthouses burned wood or coal in open fires, and later oil lamps set in
front of polished metal mirrors shaped as parabolas. The silvered copper of these reflectors
tarnished quickly, and keepers spent hours each day polishing it.

A parabolic reflector concentrated light better than a bare flame, but its beam was weak: on a
clear night it could be seen perhaps eight to ten nautical miles away, and in haze much less.
""",
    "lens-orders.md": """\
# Orders of lenses

Fresnel lenses were made in sizes called orders. A first-order lens, the largest, stood taller than
a person and was used for major coastal lights that ships saw first when approaching land. Sixth-
order lenses, the smallest, marked harbour entrances and rivers where a short range was enough.

Choosing the order was choosing the range: a larger lens gathers more of the lamp's light and sends
a stronger beam.
""",
    "range.md": """\
# How far a light can be seen

Two limits decide how far away a lighthouse is seen. The luminous range depends on how bright the
beam is and how clear the air is. The geographical range depends on the height of the light and of
the observer's eye, because the curvature of the Earth hides a light below the horizon.

Builders therefore raised lights on tall towers and on cliffs. A brighter lens helps only up to the
geographical range; beyond it, the light is hidden by the Earth however strong it is.
""",
    "keepers.md": """\
# Keepers and their work

Lighthouse keepers trimmed wicks, carried oil up the tower, wound the clockwork that turned the
lens, and kept a log of the weather and of passing ships. The turning lens made each light flash in
its own pattern, so sailors could tell one lighthouse from another at night.
""",
}

PLANETS: dict[str, str] = {
    "mars.md": """\
# Mars

Mars is the fourth planet from the Sun. A year on Mars, one orbit around the Sun, lasts 687 Earth
days, and a Martian day is about 24 hours and 37 minutes long.

Because its year is almost twice as long as the Earth's, each season on Mars lasts about twice as
long as a season on Earth. Its orbit is more elongated than the Earth's, so the seasons of its two
hemispheres differ in length.

Mars has two small moons, Phobos and Deimos, discovered by the astronomer Asaph Hall in 1877.
""",
    "olympus-mons.md": """\
# Olympus Mons

Olympus Mons, a shield volcano on Mars, rises about 22 kilometres above the surrounding plains,
about two and a half times the height of Mount Everest above sea level. It is the tallest known
volcano in the Solar System.

Its base is about 600 kilometres across, and a caldera about 80 kilometres wide sits at its summit.
It grew so large because Mars has no moving tectonic plates: the volcano stayed over the same hot
spot while lava flowed out for hundreds of millions of years.
""",
    "venus.md": """\
# Venus

Venus is the second planet from the Sun. It turns very slowly: one rotation takes 243 Earth days,
longer than its year of 225 Earth days, and it turns in the opposite direction to most planets.

Its thick atmosphere of carbon dioxide traps heat, so the surface stays near 465 °C, hotter than
the surface of Mercury although Venus is farther from the Sun.
""",
    "mercury.md": """\
# Mercury

Mercury is the planet closest to the Sun and the smallest of the eight. A year on Mercury lasts 88
Earth days.

With almost no atmosphere to hold heat, its surface swings from about −173 °C at night to about
427 °C in the day.
""",
    "jupiter.md": """\
# Jupiter

Jupiter is the largest planet, a gas giant more than eleven times as wide as the Earth. A year on
Jupiter lasts about 12 Earth years. Its Great Red Spot is a storm larger than the Earth that has
been watched for more than three hundred years.
""",
}


def write_notes(folder: Path, notes: dict[str, str]) -> Path:
    """Write `notes` into `folder` and return it resolved (sources are named by real path)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in notes.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder.resolve()
