from code3.cli import main

raise SystemExit(main())
