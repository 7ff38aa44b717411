"""What every report page shares: its shell, style and tables, and its inline SVG charts.
"""
