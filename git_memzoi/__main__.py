"""`python -m git_memzoi` runs the same program as `git memzoi`."""

from git_memzoi.cli.entry import main

if __name__ == "__main__":
    main()
