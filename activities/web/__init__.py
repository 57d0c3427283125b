"""The web, as the researcher reads it: fetching pages safely (crawler, netguard, robots), telling
what they are and how they are encoded (charset), and keeping their text (extraction, reading)."""
