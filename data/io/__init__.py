"""File I/O shared by every task: atomic writes of result files."""
