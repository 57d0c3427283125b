"""What the web app does for a person, one module per concept, pairing name for name with `api/`
(JSON) and `pages/` (HTML): research, standing, documents, conversation, downloads, events, checks,
revisions, sources. They reach Temporal and the library only through `starter/client/`."""
