"""Web search providers (SearxNG, Tavily, Brave, DuckDuckGo, the local corpus), the HTTP they
share, and the strategies that combine them."""
