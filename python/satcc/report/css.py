"""The style sheet of satcc's HTML pages (`satcc report`'s and `satcc reproduce`'s), in a module
of its own so that a page without figures imports no matplotlib."""

CSS = """
body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;margin:2em auto;max-width:1100px;
color:#222;line-height:1.4;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;
margin-top:2em}.meta{color:#555}nav a{margin-right:1em}
figure{margin:1.5em 0;padding:0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{color:#444;font-size:.92em;margin-top:.3em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
th,td{border:1px solid #ddd;padding:.2em .5em;text-align:right;vertical-align:top}
th{background:#f4f4f4}td.l,th.l{text-align:left}
tr.failed td{background:#fff0f0}tr.pending td{color:#888}
pre{background:#f8f8f8;padding:.6em;overflow-x:auto;font-size:.85em}
details summary{cursor:pointer}.skip li{margin:.2em 0}.problem{color:#a00}
"""
