"""Pure Super 9 rules: no database, no clock (time is passed in), frozen values."""
