"""Neutral filler for ImplicitHop contexts (``filler`` knob): sentences about nothing in the knowledge base.

Written for this package by the lurch-tasks authors (Apache-2.0). They name no entity and no relation, no
fact template reads them (a test checks this), and they repeat, as the noise of a needle-in-a-haystack
context does; only their share of the context is a knob.
"""

from __future__ import annotations

from ...core.rng import StableRng

SENTENCES = (
    "Rain fell steadily through the afternoon.",
    "The morning train was a few minutes late.",
    "Most of the shops close early on the last day of the week.",
    "A light wind came off the water in the evening.",
    "The library keeps its older maps in a cool room downstairs.",
    "Nobody could agree on the best route over the hills.",
    "The harvest was smaller than usual that year.",
    "Bread from the corner bakery sells out before noon.",
    "The river runs high every spring.",
    "Street lamps were lit one by one as the sun went down.",
    "The committee met twice and decided nothing.",
    "A new coat of paint made the old hall look bright again.",
    "Fog hid the far end of the valley until midday.",
    "The market square fills with stalls on holidays.",
    "Snow stayed on the high passes well into summer.",
    "The clock in the tower runs slightly fast.",
    "A long queue formed outside the ticket office.",
    "The road along the coast was closed for repairs.",
    "Gulls circled the harbour all morning.",
    "The garden behind the museum is open to visitors.",
    "Traffic was heavy on the bridge after the concert.",
    "The night was clear and the stars were bright.",
    "Old letters were found in a drawer of the desk.",
    "The ferry does not run when the sea is rough.",
    "Children played in the park until it grew dark.",
    "The kitchen smelled of fresh coffee and toast.",
    "A storm knocked down two trees near the school.",
    "The orchestra rehearsed the same piece for hours.",
    "Prices at the fair were higher than the year before.",
    "The path through the woods is easy to miss.",
    "A thin layer of dust covered the shelves.",
    "The village well has not been used for decades.",
    "Bells rang across the town at midday.",
    "The plain stretched flat and green to the horizon.",
    "The notice on the door asked visitors to knock twice.",
    "Lanterns swayed in the breeze along the pier.",
    "The soup was too salty, but nobody complained.",
    "A wooden fence marks the edge of the field.",
    "The lecture ran long and the hall emptied slowly.",
    "Frost covered the windows on the coldest mornings.",
)


def filler_lines(count: int, rng: StableRng) -> list[str]:
    """``count`` seeded neutral sentences (with repeats)."""
    return [rng.choice(SENTENCES) for _ in range(count)]
