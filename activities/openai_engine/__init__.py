"""The LLM engine for any OpenAI-compatible endpoint, one module per concern.

`engine` (one method per role; `checking` holds the judge's, the reviser's and the critic's),
`chat` (the one call to the endpoint: prompt, request, reply), `endpoint` (one request sent, in
its turn, adapted to what the server takes, and priced), `client` (what a request carries and what
each server rejected), `errors` (what Temporal should do about a failure), `replies` (what the
model writes back, and how it is read), `formatting` (how the research's state is written into
the prompts). Callers need only the engine.
"""

from activities.openai_engine.engine import OpenAIEngine

__all__ = ["OpenAIEngine"]
