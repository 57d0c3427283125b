"""The web app: a JSON API, an event stream and pages over the same Temporal research.

- `app.create_app(config)`: the FastAPI app (API under /api, pages, /static, security headers,
  one-line errors);
- `serve.serve(host, port, config)`: runs it under uvicorn (`python -m starter serve`);
- `auth`: tokens, signed session cookies, CSRF and same-origin checks (and the helpers pages use);
- `deps`: the dependencies: the user, the Temporal client, the research a user owns;
- `api/`: one router per resource (research, library, health);
- `events`: the Server-Sent Events stream, one shared poller per research per process;
- `pages`, `render`, `templates/`, `static/`: the pages a person uses.

The app holds no research state: it starts workflows, delivers answers and reviews through the
workflow's validating updates, reads status and events by query and finished research from the
library, so replicas behind a load balancer need nothing shared but Temporal and the library.
"""
