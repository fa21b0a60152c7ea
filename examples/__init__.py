"""Example plugins for plugin authors; the test suite loads and runs them."""
