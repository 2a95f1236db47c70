"""What a sample, a step or a run looks like, as data: plain Python (no Django), shared by the web
pages, their JSON twins and the terminal UI. Escaping and styling are the templates' job."""
