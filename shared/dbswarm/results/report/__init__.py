"""The result files: result.csv, timeseries.csv, summary.md and report.html."""
