"""`python -m satcc ...`: the `satcc` command (satcc.cli.entry), for an environment whose
scripts directory is not on PATH."""

from satcc.cli import entry

if __name__ == "__main__":
    entry()
