# Shim so Dataflow's --setup_file can stage this package; all metadata is in pyproject.toml.
from setuptools import setup

setup()
