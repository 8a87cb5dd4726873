"""`python -m desktop_app` behaves exactly like the `desktop-app` command."""

from desktop_app.cli import main

raise SystemExit(main())
