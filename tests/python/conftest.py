import os
import sys

# Lets the op tests `import opdb` (the op database lives next to them).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
