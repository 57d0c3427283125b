"""How the pages say things: the Jinja environment, a report's Markdown rendered safely, and the
words about a review's rounds. Beside `pages/`, which routes; nothing here reaches a service."""
