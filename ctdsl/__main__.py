"""`python -m ctdsl ARGS` runs the command line as the installed `ctdsl` script does (where no script is on PATH)."""

from ctdsl.cli import main

if __name__ == "__main__":
    main()
