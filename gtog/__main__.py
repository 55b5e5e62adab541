"""`python -m gtog` runs the `gtog` command."""

from gtog.cli import main

if __name__ == "__main__":
    main()
