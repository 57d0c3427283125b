"""Who is asking: bearer tokens and sign-in sessions (`auth`), OpenID Connect (`oidc`), and the
sessions' revocations and failed attempts (`sessions`)."""
