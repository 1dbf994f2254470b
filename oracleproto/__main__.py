from oracleproto.cli import main

main()
