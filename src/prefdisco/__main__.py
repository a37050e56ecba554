from prefdisco.cli import main

main()
