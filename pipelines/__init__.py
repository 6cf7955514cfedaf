"""Apache Beam jobs of storybench: wiring only (`python -m pipelines.<job> --help`)."""
