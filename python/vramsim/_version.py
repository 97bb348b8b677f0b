# The version of vramsim: the one place it is written. The Makefile reads
# it for the C binary (`vramsim --version`), pyproject.toml for the package.
__version__ = "0.1.0"
