/* Live updates of the header: filled in by the live-updates work (issue 6). */
