"""Pure text logic for storybench. Nothing in this package imports Apache Beam."""
