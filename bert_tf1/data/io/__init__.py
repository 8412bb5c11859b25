"""File I/O shared by every task: atomic writes, TFRecord specs and checks,
result files, the output_dir lock and the user-error base class."""
