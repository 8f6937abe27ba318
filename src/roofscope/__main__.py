from roofscope.cli import main

raise SystemExit(main())
