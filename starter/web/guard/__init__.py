"""What stands between the network and the app: the shield (sizes, rates, headers), admission and
fair slots for heavy work, slow clients' deadlines and the bounded JSON body."""
