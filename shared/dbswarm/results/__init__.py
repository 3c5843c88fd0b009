"""What a campaign leaves: the documents between steps, the store, the merge, reports and verdicts."""
