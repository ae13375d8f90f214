import sys

from kraft.spark.jvm import main

sys.exit(main())
