"""Small plugins the host tests load by module path."""
