"""A module whose import never ends (a start-up that hangs: the start-up limit must catch it)."""
import threading

threading.Event().wait(300)
