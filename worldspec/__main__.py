"""`python -m worldspec ...`: the `worldspec` command, for environments where its script is not on PATH."""
from worldspec.cli import main

if __name__ == "__main__":
    main(prog_name="worldspec")
