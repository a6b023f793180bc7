"""The application layer: the command line, the composition root that assembles a
running gateway, the demo and the emulator commands.  Only this layer imports
:mod:`emulators`; nothing below imports it."""
