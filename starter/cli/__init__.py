"""The command-line front end: `python -m starter ...` (`main`), its commands, the terminal's
progress lines and review prompt, and the dev stack (`python -m starter.cli.stack`). It starts,
steers and reads research through the client (`starter/client/`)."""
