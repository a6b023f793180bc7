"""Static files of the signage page (a package only so that wheels include them)."""
