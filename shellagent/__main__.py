from shellagent.cli.main import main

raise SystemExit(main())
