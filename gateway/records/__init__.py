"""Records a regulator can trust: the venue's keys, signed checkpoints and exports."""
