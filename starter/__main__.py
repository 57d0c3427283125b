import os
import sys


def main() -> None:
    """`python -m starter` and the `deep-research` console script. A Ctrl-C while the program is
    still loading (its imports take a moment) ends it quietly too, as one later does."""
    try:
        from starter.cli.main import run
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        os._exit(130)
    code = run()
    # Leave without interpreter teardown: the Temporal client's Rust threads can crash a finalizing
    # interpreter (temporalio/sdk-python#300, seen here as an occasional SIGSEGV after a finished
    # command), and a prompt thread may still be blocked in input() holding the stdin lock.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    main()
