"""A small corpus written for this project's tests (no third-party text): a home baker's notes.

Its pages answer some questions and, on purpose, not others: it says how hot and how long to bake
a sourdough loaf and how to feed a starter, but never where to keep a loaf once it is baked, so a
report can be checked for saying that the sources do not answer a question. One page is a PDF
whose first line is its title, as scanned handouts and exported slides often are.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.documents import make_pdf

PAGES = {
    "oven.md": """# Oven temperatures for bread

A sourdough loaf bakes best in an oven preheated to 250 degrees Celsius for at least forty minutes.
Baking the loaf in a covered cast iron pot for the first twenty minutes traps steam around the dough.
After removing the lid, the loaf bakes for another twenty to twenty five minutes at 230 degrees Celsius.
A loaf is done when its crust is deep brown and its base sounds hollow when tapped.
An oven thermometer shows the real temperature, because many ovens run twenty degrees cooler than their dial.
""",
    "starter.md": """# Feeding a sourdough starter

A sourdough starter is a culture of wild yeast and lactic acid bacteria kept in flour and water.
Feed the starter once a day with equal weights of flour and water when it lives on the kitchen counter.
A starter kept in the refrigerator needs feeding only once a week, because the cold slows the yeast down.
Discard about half of the starter before each feeding, so the fresh flour is not spread too thin.
A healthy starter doubles in volume within six hours of a feeding and smells pleasantly sour.
""",
    "shaping.md": """# Shaping and proofing dough

Shaping builds surface tension, so the loaf rises upwards in the oven rather than spreading flat.
A shaped loaf proofs in a floured basket for two to four hours at room temperature.
Proofing overnight in the refrigerator slows fermentation and gives the bread a more sour taste.
Scoring the top of the loaf with a razor blade lets the dough expand along a chosen line while baking.
""",
    "garden.md": """# Growing tomatoes

Tomato plants need at least six hours of direct sunlight every day to ripen their fruit.
Water the plants deeply twice a week rather than a little every day, so their roots grow down.
A layer of straw mulch keeps the soil moist and stops soil splashing onto the lower leaves.
""",
}

#: The PDF's pages: the first line of page one is its title, with no metadata title to say so.
HANDOUT = [
    [
        "Rye Flour Handout",
        "Rye flour holds more water than wheat flour, so a rye dough feels sticky even when it is right.",
        "A rye starter ferments faster than a wheat starter and should be fed twice a day in summer.",
    ],
]


def write_kitchen_corpus(folder: Path) -> Path:
    """The corpus in `folder` (created), for a worker's RESEARCH_CORPUS_DIR."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in PAGES.items():
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "rye-handout.pdf").write_bytes(make_pdf(HANDOUT))
    return folder
