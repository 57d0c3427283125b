"""The web app's pages, one module per page as `api/` has one per resource: home, research,
library, standing, check (Check citations), documents (the home page's forms), signin. Each renders in `frame.py`'s frame
with the one templating object (`starter/web/presentation/templating.py`); forms read and answer through
`forms.py`. A new page: a module here with its `router`, one line below, its template.
"""

from fastapi import APIRouter

from starter.web.pages import (
    check,
    documents,
    home,
    library,
    oidc_signin,
    research,
    revisions,
    signin,
    standing,
)

router = APIRouter(include_in_schema=False)
for page in (home, research, revisions, library, standing, check, documents, signin, oidc_signin):
    router.include_router(page.router)
